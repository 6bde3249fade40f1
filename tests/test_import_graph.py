"""The import graph: no module imports itself through others, imports flow one way,
shim <- catalog <- engines, and within the writer core <- services <- entry modules, and catalog
and engines use only shim's public surface (lazy imports inside functions and `if TYPE_CHECKING:`
ones count: a type-only circle is still a circle to read through)."""

from __future__ import annotations

import grimp
import pytest

PACKAGES = ("shim", "catalog", "engines")

PUBLIC_MODULES = frozenset({
    "shim",  # open_table, Table, Scan, ScanOptions, FileSlice, FileSchema, the errors
    "shim.errors",
    "shim.scan_options",
    "shim.table",
    "shim.local_cache",
    "shim.log.positions",  # the portable Roaring64 codec of row positions (Hudi's record positions, Iceberg's deletion vectors)
    "shim.properties",
    "shim.planning",  # the package's names (TableSnapshot, check_time_travel, ...), not its modules
    "shim.read",  # the package's names (SkippedBlocks, TimeLimit, read_file_schema, ...), not its modules
})
"""Modules of shim that catalog/ and engines/ may import."""
PUBLIC_PACKAGES = ("shim.filters", "shim.keys", "shim.layout", "shim.schema", "shim.timeline", "shim.write",
                   "shim.storage")
"""Packages of shim that catalog/ and engines/ may import, every module of them: filters, key
generation, the table's layout, schemas, the timeline, the writer (with its table services) and
the storage a table's files are reached through."""

WRITER_ENTRIES = ("shim.write.job", "shim.write.task", "shim.write.ddl")
"""The writer's entry modules, its top layer: a write job on the driver (which runs the table
services after its commit), one task's file groups, ALTER TABLE."""
WRITER_SERVICES = "shim.write.services"
"""The table services (clean, archive, compaction), the middle layer; every other module of
`shim.write` is the writer's core, the bottom one."""


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, exclude_type_checking_imports=False, cache_dir=None)


def _cycles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(imports):
        if root in index:
            continue
        work = [(root, iter(sorted(imports[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(imports[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_imports_itself_through_others(graph):
    imports = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    assert _cycles(imports) == []


@pytest.mark.parametrize(("lower", "upper"), [("shim", "catalog"), ("shim", "engines"), ("catalog", "engines")])
def test_imports_flow_one_way(graph, lower, upper):
    assert not graph.chain_exists(importer=lower, imported=upper, as_packages=True)


def test_planning_uses_reading_never_the_other_way(graph):
    """`shim.planning` plans a read and hands `shim.read` a `PlannedScan` to execute: reading
    never imports planning, whatever the detour; the table's API sits above both."""
    assert graph.chain_exists(importer="shim.planning", imported="shim.read", as_packages=True)
    assert not graph.chain_exists(importer="shim.read", imported="shim.planning", as_packages=True)
    assert not graph.chain_exists(importer="shim.planning", imported="shim.table")
    assert not graph.chain_exists(importer="shim.read", imported="shim.table")


def writer_layer(module: str) -> int | None:
    """0: the writer's core, 1: the table services, 2: the entry modules; None: not the writer."""
    if module in WRITER_ENTRIES:
        return 2
    if module == WRITER_SERVICES or module.startswith(f"{WRITER_SERVICES}."):
        return 1
    return 0 if module == "shim.write" or module.startswith("shim.write.") else None


def _upward_chains(modules: set[str], shortest_chain) -> list[tuple[str, ...]]:
    """Every chain of imports from a module of the writer to one of a higher layer."""
    layers = {m: layer for m in sorted(modules) if (layer := writer_layer(m)) is not None}
    chains = (shortest_chain(low, high) for low in layers for high in layers if layers[high] > layers[low])
    return [chain for chain in chains if chain]


def test_the_writers_imports_point_down(graph):
    """The core (options and the services' settings, transactions, rollback, data files) never
    imports the table services or the entry modules, and the services never import the entry
    modules: `commit_write` runs the services after a commit, not the other way round. Detours
    through modules outside the writer count."""
    assert set(WRITER_ENTRIES) | {WRITER_SERVICES} <= graph.modules
    assert _upward_chains(graph.modules, lambda a, b: graph.find_shortest_chain(importer=a, imported=b)) == []


def test_the_upward_finder_finds_upward_imports():
    imports = {"shim.write.txn": {"shim.read"}, "shim.read": {"shim.write.services.clean"},
               "shim.write.services.clean": {"shim.write.txn"}, "shim.write.job": {"shim.write.services.clean"}}

    def shortest_chain(a: str, b: str) -> tuple[str, ...] | None:
        paths = [(a,)]
        while paths:
            path = paths.pop(0)
            if path[-1] == b:
                return path
            paths += [(*path, n) for n in sorted(imports.get(path[-1], ())) if n not in path]
        return None

    assert _upward_chains(set(imports), shortest_chain) == [
        ("shim.write.txn", "shim.read", "shim.write.services.clean")]
    assert [writer_layer(m) for m in ("shim.write.txn", "shim.write.services", "shim.write.task", "shim.read")] == \
        [0, 1, 2, None]


def is_public(module: str) -> bool:
    return module in PUBLIC_MODULES or module.startswith(tuple(f"{p}." for p in PUBLIC_PACKAGES)) \
        or module in PUBLIC_PACKAGES


def test_catalog_and_engines_import_only_shims_public_surface(graph):
    private = sorted(
        (importer, imported)
        for importer in graph.modules
        if importer.split(".")[0] in ("catalog", "engines")
        for imported in graph.find_modules_directly_imported_by(importer)
        if imported.split(".")[0] == "shim" and not is_public(imported)
    )
    assert private == []


def test_the_public_surface_is_what_it_says():
    assert is_public("shim.read") and is_public("shim.layout.slices") and is_public("shim.write")
    assert not is_public("shim.read.base_files") and not is_public("shim.log.reader")
    assert not is_public("shim.writer")


def test_the_public_names_of_shim_and_shim_read_resolve():
    import shim
    import shim.read

    for module in (shim, shim.read):
        for name in module.__all__:
            assert getattr(module, name) is not None, (module.__name__, name)


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
