"""Dependencies point downward (docs/architecture.md):

    cli / mcp / ui  →  ops  →  memory / personal / runner / integrations / org  →  sessions / repo
                    →  core / contracts / models

Every `import` in src/teamlore — top-level, inside a function, or under TYPE_CHECKING — is
mapped to the package it crosses into; an edge between two packages that is not in ALLOWED (or,
with a reason, in EXCEPTIONS) fails this test. `memory` and `personal` never import each other.
Inside `memory/` the pipeline stages are packages with their own table: the store knows no stage,
extraction knows nothing of promotion.

Adding an edge is a design decision: put it in the table with the change that needs it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

MEMORY_STAGES = ("store", "extraction", "promotion", "consolidation", "skills")

_BOTTOM = {"core"}
_FOUNDATION = {"core", "contracts", "models"}
_STORAGE = {"sessions", "repo"}
_DOMAIN = {"memory", "personal", "runner", "integrations", "org"}
_STAGES = {"memory.store", "memory.extraction", "memory.promotion"}
_MEMORY_PACKAGES = {"memory", *(f"memory.{stage}" for stage in MEMORY_STAGES)}

ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "contracts": _BOTTOM,
    "models": _BOTTOM,
    "sessions": _FOUNDATION,
    "repo": _FOUNDATION | {"sessions"},  # the repository tables live in the index DB
    "memory": _FOUNDATION | _STORAGE | _MEMORY_PACKAGES,  # status and assemble read every stage
    "memory.store": _FOUNDATION,
    "memory.extraction": _FOUNDATION | _STORAGE | {"memory.store"},
    "memory.promotion": _FOUNDATION | _STORAGE | {"memory.store", "memory.extraction"},
    # consolidation and Skills are candidate kinds built on the three stages
    "memory.consolidation": _FOUNDATION | _STORAGE | _STAGES,
    "memory.skills": _FOUNDATION | _STORAGE | _STAGES,
    "personal": _FOUNDATION | _STORAGE,
    "runner": _FOUNDATION | _STORAGE,
    "integrations": _FOUNDATION | _STORAGE,
    # the org index reads repositories (git) and reuses the memory store's parser, lint, ranking
    "org": _FOUNDATION | _STORAGE | {"memory.store"},
    "ops": _FOUNDATION | _STORAGE | _DOMAIN | _MEMORY_PACKAGES,
    "cli": _FOUNDATION | {"ops"},
    "mcp": _FOUNDATION | {"ops"},
    "ui": _FOUNDATION | {"ops"},
}

# Edges that exist today against the layering, each with its reason. Shrink this list; never grow
# it without saying why here.
EXCEPTIONS: dict[tuple[str, str], str] = {
    # `teamlore mcp` and `teamlore ui` are CLI commands that start the servers (lazy imports).
    ("cli", "mcp"): "the `teamlore mcp` command starts the MCP server",
    ("cli", "ui"): "the `teamlore ui` command starts the review page server",
}


def package_of(module: str) -> str | None:
    """`teamlore.memory.store.layout` → `memory.store`; `teamlore.ops.registry` → `ops`."""
    parts = module.split(".")
    if parts[0] != "teamlore" or len(parts) < 2 or not (SRC / "teamlore" / parts[1]).is_dir():
        return None  # not ours, or the root package itself (`from teamlore import __version__`)
    if parts[1] == "memory" and len(parts) > 2 and parts[2] in MEMORY_STAGES:
        return f"memory.{parts[2]}"
    return parts[1]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(
    source: str, module: str, *, is_package: bool, on_load_only: bool = False
) -> Iterator[str]:
    """Every module an import statement names, at any depth (function-level imports too; with
    `on_load_only`, only the imports the module runs while it loads: `imports_on_load`)."""
    tree = ast.parse(source)
    for node in imports_on_load(tree) if on_load_only else ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            yield base
            # `from teamlore import ops` / `from teamlore.memory import store` name packages too
            yield from (f"{base}.{alias.name}" for alias in node.names)


def imports_on_load(tree: ast.Module) -> Iterator[ast.stmt]:
    """The import statements a module runs while it loads: not those inside a function or under
    `if TYPE_CHECKING:` (a class body, a `try` or another `if` runs on load)."""
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            pending.extend(node.orelse)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.expr)):
            pending.extend(ast.iter_child_nodes(node))


def package_edges(source: str, module: str, *, is_package: bool = False) -> set[tuple[str, str]]:
    here = package_of(module)
    if here is None:
        return set()
    edges = set()
    for target in imported_modules(source, module, is_package=is_package):
        there = package_of(target)
        if there is not None and there != here:
            edges.add((here, there))
    return edges


def forbidden(edges: set[tuple[str, str]]) -> set[tuple[str, str]]:
    return {(a, b) for a, b in edges if b not in ALLOWED.get(a, set()) and (a, b) not in EXCEPTIONS}


def source_edges() -> dict[tuple[str, str], list[str]]:
    found: dict[tuple[str, str], list[str]] = {}
    for path in sorted((SRC / "teamlore").rglob("*.py")):
        module = module_name(path)
        for edge in package_edges(
            path.read_text(encoding="utf-8"), module, is_package=path.name == "__init__.py"
        ):
            found.setdefault(edge, []).append(module)
    return found


def test_every_import_between_packages_points_downward() -> None:
    found = source_edges()
    bad = {edge: found[edge] for edge in forbidden(set(found))}
    assert bad == {}, (
        "imports against the layering (tests/test_architecture.py ALLOWED):\n"
        + "\n".join(f"  {a} → {b}: {', '.join(modules)}" for (a, b), modules in sorted(bad.items()))
    )


def test_every_package_under_src_is_in_the_table() -> None:
    packages = {package_of(module_name(p)) for p in (SRC / "teamlore").rglob("*.py")}
    assert packages - {None} <= set(ALLOWED)


def test_exceptions_still_exist() -> None:
    """An exception whose import is gone is removed from the list, so the list only shrinks."""
    assert set(EXCEPTIONS) - set(source_edges()) == set()


def test_memory_and_personal_never_import_each_other() -> None:
    for a, b in (
        ("personal", "memory.store"),
        ("memory.promotion", "personal"),
        ("memory", "personal"),
    ):
        assert forbidden({(a, b)}) == {(a, b)}


def test_an_upward_import_fails_even_inside_a_function() -> None:
    source = "def f():\n    from teamlore.ops.registry import OPERATIONS\n"
    edges = package_edges(source, "teamlore.sessions.indexer")
    assert edges == {("sessions", "ops")}
    assert forbidden(edges) == {("sessions", "ops")}


def test_a_sideways_import_inside_memory_fails() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from teamlore.memory.promotion import review\n"
        "from ..extraction.staging import x\n"
    )
    edges = package_edges(source, "teamlore.memory.store.layout")
    assert edges == {("memory.store", "memory.promotion"), ("memory.store", "memory.extraction")}
    assert forbidden(edges) == edges
    allowed = package_edges(source.replace("promotion", "store"), "teamlore.memory.extraction.x")
    assert forbidden(allowed) == set()


def test_package_imports_by_name_are_seen() -> None:
    edges = package_edges("from teamlore import ops\nimport teamlore.cli\n", "teamlore.core.paths")
    assert forbidden(edges) == {("core", "ops"), ("core", "cli")}


def test_comments_cite_the_glossary_or_docs_not_the_seeds() -> None:
    """The seeds are outside the repository: a code comment names a glossary term or a `docs/`
    page instead of "seed 003 §4" or "DEV-1"."""
    citation = re.compile(r"\b[Ss]eed \d{3}\b|\bDEV-\d+\b")
    found = [
        f"{path.relative_to(SRC)}:{number}"
        for path in sorted(SRC.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if citation.search(line)
    ]
    assert found == []


_DOC_CITATION = re.compile(r'docs/([a-z0-9-]+\.md)(?:,? ?\(?"([^"]+)")?')


def _doc_anchors(page: Path) -> set[str]:
    """What a citation may name on a page: its headings and its bold lead-ins (`**Vectors.**`),
    lowercased, without trailing punctuation."""
    found = re.findall(r"^#+\s+(.+)$|\*\*([^*\n]+)\*\*", page.read_text(encoding="utf-8"), re.M)
    return {(heading or bold).strip().rstrip(".:").lower() for heading, bold in found}


def test_every_docs_page_and_section_the_code_cites_exists() -> None:
    """A comment or message that sends the reader to `docs/sessions.md, "Passages"` finds that
    page and a heading or bold lead-in starting with those words: names drift when a section is
    renamed, and this is where they are caught."""
    docs = SRC.parent / "docs"
    anchors = {page.name: _doc_anchors(page) for page in docs.glob("*.md")}
    sources = [*sorted(SRC.rglob("*.py")), *sorted((SRC.parent / "bench").glob("*.py"))]
    dangling = []
    for path in sources:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for page, section in _DOC_CITATION.findall(line):
                named = anchors.get(page)
                if named is None or (
                    section and not any(a.startswith(section.lower()) for a in named)
                ):
                    where = path.relative_to(SRC.parent)
                    dangling.append(f"{where}:{number} docs/{page} {section!r}")
    assert dangling == []


# --- the shape of the house (docs/architecture.md "Packages and their direction") ---------------

MAX_MODULE_LINES = 800
MAX_PACKAGE_MODULES = 15


def module_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """module → the modules of `sources` it imports (top level, inside a function, or under
    TYPE_CHECKING). `sources` maps a module name to (source, is_package). An import of a name
    inside a module counts as an import of that module; importing one's own package does not."""
    lazy = lazy_names(sources)
    graph: dict[str, set[str]] = {}
    for module, (source, is_package) in sources.items():
        targets = set()
        for name in _with_lazy(imported_modules(source, module, is_package=is_package), lazy):
            target = _module_of(name, sources)
            if target and target != module and not module.startswith(target + "."):
                targets.add(target)
        graph[module] = targets
    return graph


def loading_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """module → the modules of `sources` whose loading its own loading waits for: those its
    imports on load name (`imports_on_load`), its own package too (`from teamlore.memory.skills
    import context` waits until the package has loaded), and its package (Python loads a module's
    package first, holding the module's import lock)."""
    lazy = lazy_names(sources)
    graph: dict[str, set[str]] = {}
    for module, (source, is_package) in sources.items():
        names = imported_modules(source, module, is_package=is_package, on_load_only=True)
        targets = {
            target
            for name in _with_lazy(names, lazy)
            if (target := _module_of(name, sources)) and target != module
        }
        package = module.rpartition(".")[0]
        graph[module] = targets | ({package} if package in sources else set())
    return graph


def lazy_names(sources: dict[str, tuple[str, bool]]) -> dict[str, str]:
    """`package.Name` → the module a package's lazy `__getattr__` loads `Name` from
    (`teamlore.contracts`, `teamlore.core.secrets`), as the package's `if TYPE_CHECKING:` imports
    say: importing such a name loads that module, which the import statement does not show."""
    lazy: dict[str, str] = {}
    for package, (source, is_package) in sources.items():
        tree = ast.parse(source)
        if not (is_package and _defines_getattr(tree)):
            continue
        for node in tree.body:
            if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
                for statement in node.body:
                    if isinstance(statement, ast.ImportFrom):
                        assert statement.level == 0, f"{package}: name its lazy modules whole"
                        for alias in statement.names:
                            lazy[f"{package}.{alias.asname or alias.name}"] = str(statement.module)
    return lazy


def _defines_getattr(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in tree.body)


def _with_lazy(names: Iterator[str], lazy: dict[str, str]) -> Iterator[str]:
    for name in names:
        yield name
        if name in lazy:
            yield lazy[name]


def _module_of(name: str, sources: dict[str, tuple[str, bool]]) -> str:
    """The module of `sources` an imported name is in (`…staging.stage_patch` → `…staging`)."""
    parts = name.split(".")
    while parts and ".".join(parts) not in sources:
        parts.pop()
    return ".".join(parts)


def import_loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import each other, directly or around a circle (the strongly
    connected components of more than one module, Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    loops: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                loops.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(loops)


def source_modules() -> dict[str, tuple[str, bool]]:
    return {
        module_name(path): (path.read_text(encoding="utf-8"), path.name == "__init__.py")
        for path in sorted((SRC / "teamlore").rglob("*.py"))
    }


def test_no_modules_import_each_other_not_even_inside_a_function() -> None:
    assert import_loops(module_graph(source_modules())) == []


def test_no_modules_wait_for_each_other_while_they_load_not_even_through_their_package() -> None:
    """Python loads a module under an import lock of its own. Two threads loading modules that
    wait for each other (a package whose `__init__` imports a module of its own, which imports the
    package back or is loaded before it) block each other: a _DeadlockError, or a half-loaded
    module (ImportError). The operations' first calls import their modules from several threads
    at once (ops/registry.py, the MCP server), so a package's `__init__` imports none of its
    modules."""
    assert import_loops(loading_graph(source_modules())) == []


def test_a_package_that_imports_its_own_module_on_load_is_a_loading_loop() -> None:
    sources = {
        "teamlore.core": ("", True),
        "teamlore.core.pkg": ("from teamlore.core.pkg import kind\n", True),
        "teamlore.core.pkg.kind": ("X = 1\n", False),
    }
    assert import_loops(loading_graph(sources)) == [["teamlore.core.pkg", "teamlore.core.pkg.kind"]]
    own_module = "from teamlore.core.pkg import kind\n"
    for lazy in ("def load():\n    ", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    "):
        sources["teamlore.core.pkg"] = (lazy + own_module, True)
        assert import_loops(loading_graph(sources)) == []
    sources["teamlore.core.pkg"] = (
        "try:\n    import teamlore.core.pkg.kind\nfinally:\n    pass\n",
        True,
    )
    assert import_loops(loading_graph(sources)) == [["teamlore.core.pkg", "teamlore.core.pkg.kind"]]


LAZY_PACKAGE = """
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from teamlore.core.pkg.kind import Kind

def __getattr__(name: str) -> Any:
    return getattr(__import__("teamlore.core.pkg.kind", fromlist=["Kind"]), name)
"""


def test_a_loading_loop_through_a_packages_lazy_names_is_found() -> None:
    """`from teamlore.core.pkg import Kind` loads `pkg.kind` through the package's `__getattr__`."""
    sources = {
        "teamlore.core": ("", True),
        "teamlore.core.pkg": (LAZY_PACKAGE, True),
        "teamlore.core.pkg.kind": ("import teamlore.core.user\n", False),
        "teamlore.core.user": ("from teamlore.core.pkg import Kind\n", False),
    }
    assert import_loops(loading_graph(sources)) == [
        ["teamlore.core.pkg.kind", "teamlore.core.user"]
    ]


def test_every_lazy_name_of_a_package_says_where_it_lives() -> None:
    """The loading checks see a lazy name's module through the package's TYPE_CHECKING imports:
    each name its `__all__` offers is among them."""
    sources = source_modules()
    lazy = lazy_names(sources)
    for package, (source, is_package) in sources.items():
        tree = ast.parse(source)
        if not (is_package and _defines_getattr(tree)):
            continue
        offered = next(
            (
                ast.literal_eval(node.value)
                for node in tree.body
                if isinstance(node, (ast.Assign, ast.AnnAssign))
                and node.value is not None
                and ast.unparse(node.targets[0] if isinstance(node, ast.Assign) else node.target)
                == "__all__"
            ),
            None,
        )
        assert offered is not None, f"{package} has a lazy __getattr__ and no __all__"
        assert [name for name in offered if f"{package}.{name}" not in lazy] == [], package


def test_a_function_level_import_loop_is_found() -> None:
    sources = {
        "teamlore.core.a": ("from teamlore.core.b import helper\n", False),
        "teamlore.core.b": ("def helper():\n    from teamlore.core import a\n", False),
        "teamlore.core.c": ("from teamlore.core.a import x\n", False),
        "teamlore.core": ("", True),
    }
    assert import_loops(module_graph(sources)) == [["teamlore.core.a", "teamlore.core.b"]]
    three = dict(sources)
    three["teamlore.core.b"] = ("import teamlore.core.c\n", False)
    assert import_loops(module_graph(three)) == [
        ["teamlore.core.a", "teamlore.core.b", "teamlore.core.c"]
    ]


def test_no_module_is_over_800_lines() -> None:
    long = {
        str(path.relative_to(SRC)): n
        for path in (SRC / "teamlore").rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}, "split these along a seam a reader can name"


def test_no_package_holds_more_than_15_modules() -> None:
    crowded = {
        str(folder.relative_to(SRC)): n
        for folder in (SRC / "teamlore").rglob("*")
        if folder.is_dir()
        and (n := len([p for p in folder.glob("*.py") if p.name != "__init__.py"]))
        > MAX_PACKAGE_MODULES
    }
    assert crowded == {}, "give these packages sub-packages by what their modules touch"
