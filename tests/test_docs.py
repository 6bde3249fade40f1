"""The README and the docs site: the site builds with `mkdocs build --strict` (a broken link fails),
the configuration page lists every flag and environment variable, and every code block follows
the snippet convention (`tests/docskit.py`), so that each one runs in a test of its kind."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import docskit
from tests.docskit import REPO

RUNNERS = {"local": "tests/engines/test_docs_snippets.py", "s3": "tests/engines/test_docs_snippets.py",
           "trino": "tests/engines/trino/test_engine_docs_snippets.py", "presto": "tests/engines/trino/test_engine_docs_snippets.py"}


def _mkdocs() -> list[str]:
    pytest.importorskip("mkdocs", reason="MkDocs builds the docs site: pip install -e '.[docs]' (part of '.[test]')")
    pytest.importorskip("material", reason="the site's theme: pip install -e '.[docs]' (part of '.[test]')")
    return [sys.executable, "-m", "mkdocs"]


def test_mkdocs_build_strict_passes(tmp_path):
    done = subprocess.run([*_mkdocs(), "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "configuration" / "index.html").is_file()
    assert (tmp_path / "site" / "ui-tables.png").is_file()


def test_mkdocs_build_strict_fails_on_a_broken_link(tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(REPO / "docs", copy / "docs")
    shutil.copy(REPO / "mkdocs.yml", copy / "mkdocs.yml")
    with open(copy / "docs" / "limits.md", "a", encoding="utf-8") as page:
        page.write("\nSee [a page that is not there](no-such-page.md).\n")
    done = subprocess.run([*_mkdocs(), "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=copy,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode != 0 and "no-such-page.md" in done.stdout + done.stderr


def test_configuration_page_is_what_make_reference_writes():
    done = subprocess.run([sys.executable, str(REPO / "docs" / "make_reference.py"), "--check"], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr


def test_configuration_page_lists_every_flag_of_every_command():
    sys.path.insert(0, str(REPO / "docs"))
    import make_reference

    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    parsers = {f"hudi-shim {name}": parser for name, parser in make_reference.commands().items()}
    parsers |= {f"python {path}": parser for path, parser in make_reference.scripts().items()}
    assert "python docker/up.py" in parsers
    for name, parser in parsers.items():
        section = page.split(f"### {name}\n", 1)[1].split("\n### ", 1)[0]
        for action in parser._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and flag != "--help":
                    assert f"`{flag}" in section, f"{name} {flag} is not in docs/configuration.md"


def _variables_read(folders: tuple[str, ...]) -> set[str]:
    """Environment variables the code under `folders` reads or sets, by their names in the source."""
    names: set[str] = set()
    for folder in folders:
        for path in (REPO / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            names |= set(re.findall(r"environ(?:\.get|\.setdefault)?\(?\[?\s*[\"']([A-Z][A-Z0-9_]+)[\"']", text))
            names |= set(re.findall(r"getenv\(\s*[\"']([A-Z][A-Z0-9_]+)[\"']", text))
            names |= {n for n in re.findall(r"\b((?:AWS|HUDI_SHIM)_[A-Z0-9_]+)\b", text) if not n.endswith("_")}
            names |= {f"HUDI_SHIM_{flavor}_JAVA_HOME" for flavor in ("TRINO", "PRESTO")
                      if "HUDI_SHIM_{distribution.flavor.upper()}_JAVA_HOME" in text}
    return names


def test_configuration_page_lists_every_environment_variable_the_code_reads():
    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    read = _variables_read(("shim", "catalog", "engines", "docker"))
    read |= {n for n in _variables_read(("tests", "bench")) if n.startswith("HUDI_SHIM_")}
    assert {"HUDI_SHIM_TOKEN", "HUDI_SHIM_TOKEN_FILE", "HUDI_SHIM_CACHE", "HUDI_SHIM_SHARED_TABLES",
            "HUDI_SHIM_TRINO_JAVA_HOME", "HUDI_SHIM_PRESTO_JAVA_HOME", "AWS_ACCESS_KEY_ID"} <= read
    plumbing = {"PATH", "PYTHONPATH"}  # handed on to child processes, not settings
    missing = sorted(name for name in read - plumbing if f"`{name}`" not in page)
    assert not missing, f"docs/configuration.md does not list {missing} (add them to docs/make_reference.py)"


def test_every_code_block_follows_the_snippet_convention():
    assert not docskit.problems(), "\n".join(docskit.problems())


def test_every_snippet_has_a_test_that_runs_it_or_says_why_not():
    found = docskit.snippets()
    assert len(found) > 40
    for snippet in found:
        assert snippet.kind in RUNNERS or (snippet.kind == "skip" and snippet.reason), snippet.where()
    for runner in set(RUNNERS.values()):
        assert (REPO / runner).is_file()
    skipped = [s for s in found if s.kind == "skip"]
    assert len(skipped) <= len(found) // 5, [f"{s.where()}: {s.reason}" for s in skipped]


def test_readme_is_short_and_links_into_the_docs():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 250
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (REPO / link).is_file(), link
    assert "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/pytest -q" in readme
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"python3 -m venv \.venv && \.venv/bin/pip install (-q )?-e '\.\[test\]' && \.venv/bin/pytest -q", ci)


def test_no_page_speaks_of_the_projects_history():
    for path in docskit.documents():
        text = path.read_text(encoding="utf-8")
        for phrase in ("this stop", "earlier stop", "before this stop"):
            assert phrase not in text, f"{path.relative_to(REPO)}: {phrase!r}"


def test_blocks_are_found_with_their_lines_and_annotations(tmp_path, monkeypatch):
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    page.write_text("# t\n\n<!-- snippet: skip (needs AWS itself) -->\n```sh\necho hi\n```\n\n```python\nx = 1\n```\n"
                    "\n```text\nout\n```\n", encoding="utf-8")
    monkeypatch.setattr(docskit, "REPO", tmp_path)
    blocks = docskit.blocks(page)
    assert [(b.line, b.language, b.annotation) for b in blocks] == [
        (4, "sh", "<!-- snippet: skip (needs AWS itself) -->"), (8, "python", None), (12, "text", None)]
    assert blocks[1].code == "x = 1\n"


def test_placeholders_stand_for_the_fixtures():
    places = docskit.Places(root=Path("/tmp/r"), catalog_port=1234, trino_port=2345, s3_prefix="p/", token="tok")
    code = 'connect("http://127.0.0.1:8080") /data/warehouse port=8081 s3://lake/warehouse <the server\'s token>'
    assert places.substitute(code) == 'connect("http://127.0.0.1:1234") /tmp/r/warehouse port=2345 s3://lake/p/warehouse tok'


def test_a_failing_snippet_names_its_file_and_line(tmp_path):
    snippet = docskit.Snippet("docs/x.md", 7, "python", "x = 1\nraise ValueError('boom')\n", "local")
    with pytest.raises(docskit.SnippetFailed, match=r"^docs/x.md:7: ValueError: boom") as failed:
        docskit.run_python(snippet, docskit.Places(root=tmp_path))
    assert 'File "docs/x.md", line 9' in str(failed.value)
    shell = docskit.Snippet("README.md", 3, "sh", "echo ok\nfalse\n", "local")
    with pytest.raises(docskit.SnippetFailed, match=r"^README.md:3: exit 1"):
        docskit.run_sh(shell, docskit.Places(root=tmp_path), tmp_path)


def test_every_catalog_file_is_one_the_suites_engines_read(tmp_path):
    """A `properties` block is what `engines.trino.catalogs` writes for the engines the tests run."""
    from engines.trino.catalogs import (
        iceberg_hadoop,
        iceberg_metastore,
        iceberg_rest,
        presto_s3_files,
        s3_files,
    )

    places = docskit.Places(root=tmp_path, catalog_port=18080, s3_endpoint="http://127.0.0.1:19000",
                            token="tok", access_key="ak", secret_key="sk")
    rest = "http://127.0.0.1:18080/iceberg"
    read = [iceberg_rest("trino", rest, token="tok"),
            iceberg_rest("trino", rest, token="tok", s3=s3_files(places.s3_endpoint, "ak", "sk")),
            iceberg_hadoop("presto", str(tmp_path / "presto-catalog")),
            iceberg_hadoop("presto", "s3://lake/presto-hadoop", s3=presto_s3_files(places.s3_endpoint, "ak", "sk")),
            iceberg_metastore("trino", "thrift://127.0.0.1:9083"), iceberg_metastore("presto", "thrift://127.0.0.1:9083"),
            iceberg_rest("trino", rest, credential="trino:<secret>", vended_credentials=True,
                         s3=s3_files(places.s3_endpoint))]
    found = [s for s in docskit.snippets() if s.language == "properties"]
    assert len(found) >= 4
    for snippet in found:
        assert docskit.properties(places.substitute(snippet.code)) in read, snippet.where()
