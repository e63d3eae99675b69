"""The package map, enforced: what each package may import (transitively), and no cycles.

Read from the source with ast (every import, also inside functions and under
TYPE_CHECKING), so a violation is found without running anything. The table,
ALLOWED, is tests/layers.py; docs/development.md's package table is generated from
it (scripts/gen_docs.py).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from tests.layers import ALLOWED, LEAVES

SRC = Path(__file__).resolve().parents[2] / "src"
ROOT = SRC / "fsarena"
ALWAYS = {*LEAVES, "__init__", "__main__"}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def resolve(module: str, name: str | None) -> str | None:
    """The fsarena module an import refers to (a submodule when `name` is one)."""
    if name and f"{module}.{name}" in MODULES:
        return f"{module}.{name}"
    return module if module in MODULES else None


@cache
def imports_of(module: str) -> frozenset[str]:
    """Every fsarena module the module imports, relative imports included."""
    path = MODULES[module]
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in MODULES}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")
                keep = len(parts) - node.level + (1 if is_pkg else 0)
                base = ".".join(parts[:keep] + ([base] if base else []))
            if not base.startswith("fsarena"):
                continue
            for a in node.names:
                target = resolve(base, a.name)
                if target:
                    found.add(target)
    found.discard(module)
    return frozenset(found)


def test_every_package_is_in_the_table() -> None:
    packages = {package_of(m) for m in MODULES} - ALWAYS
    assert packages == set(ALLOWED), "add the new package to ALLOWED (then run scripts/gen_docs.py)"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_allowed_imports(module: str) -> None:
    me = package_of(module)
    if me in ALWAYS:
        return
    for target in imports_of(module):
        other = package_of(target)
        assert other in ALLOWED[me] | ALWAYS | {me}, f"{module} imports {target}"


def face_of(package: str) -> dict[str, tuple[str, ...]]:
    """The package's FACE, read from its __init__.py (without importing it); a package that
    has an `__all__` shows those names of its own ("")."""
    tree = ast.parse((ROOT / package / "__init__.py").read_text())
    found: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
            name = target.id if isinstance(target, ast.Name) else ""
            if name in ("FACE", "__all__") and node.value is not None:
                found[name] = ast.literal_eval(node.value)
    face = found.get("FACE")
    assert isinstance(face, dict), f"fsarena.{package} has no FACE in its __init__.py"
    if "__all__" in found:
        face = {**face, "": tuple(found["__all__"])}  # type: ignore[arg-type]
    return face


def crossings(module: str, source: str | None = None) -> list[tuple[str, str, str]]:
    """(package, module within it, name) of each import of another package's name; "*" when
    a module is imported as such. Leaves and the module's own package are not crossings."""
    me, found = package_of(module), []
    text = MODULES[module].read_text() if source is None else source
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found += [(package_of(a.name), a.name.split(".", 2)[2], "*") for a in node.names
                      if a.name in MODULES and a.name.count(".") >= 2]  # fmt: skip
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if not node.module.startswith("fsarena."):
                continue
            for a in node.names:
                if f"{node.module}.{a.name}" in MODULES:
                    found.append(
                        (package_of(node.module), f"{node.module}.{a.name}".split(".", 2)[2], "*")
                    )
                else:
                    within = node.module.split(".", 2)[2] if node.module.count(".") >= 2 else ""
                    found.append((package_of(node.module), within, a.name))
    return [c for c in found if c[0] not in ALWAYS and c[0] != me]


def test_every_package_has_a_face() -> None:
    for package in ALLOWED:
        for within in face_of(package):
            assert f"fsarena.{package}.{within}".rstrip(".") in MODULES, (
                f"fsarena.{package}'s FACE names {within!r}, which is not one of its modules"
            )


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_across_packages_go_through_the_face(module: str) -> None:
    """A package shows other packages only what its __init__.py's FACE names (pyperf's face,
    listed rather than re-exported: importing a package's face loads none of its modules)."""
    for package, within, name in crossings(module):
        shown = face_of(package).get(within, ())
        assert name in shown, (
            f"{module} imports {name!r} from fsarena.{package}.{within}, which fsarena.{package}'s "
            "FACE (its __init__.py) does not show: import what it shows, or add the name there"
        )


def test_the_face_check_can_fail() -> None:
    """A name no FACE shows, imported by another package, is reported."""
    source = "from fsarena.host.ledger import Ledger, nobody_shows_this\n"
    found = crossings("fsarena.run.runner", source)
    assert found == [("host", "ledger", "Ledger"), ("host", "ledger", "nobody_shows_this")]
    shown = face_of("host")["ledger"]
    assert [c for c in found if c[2] not in shown] == [("host", "ledger", "nobody_shows_this")]


@pytest.mark.parametrize("leaf", sorted(LEAVES))
def test_leaves_import_nothing_of_fsarena_but_leaves(leaf: str) -> None:
    assert imports_of(f"fsarena.{leaf}") <= {f"fsarena.{other}" for other in LEAVES}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = []
            while True:
                w = stack.pop()
                members.append(w)
                if w == v:
                    break
            if len(members) > 1:
                out.append(sorted(members))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_module_cycles() -> None:
    graph = {m: set(imports_of(m)) for m in MODULES}
    assert _cycles(graph) == []


def test_no_package_cycles() -> None:
    graph: dict[str, set[str]] = {}
    for m in MODULES:
        for t in imports_of(m):
            if package_of(t) != package_of(m):
                graph.setdefault(package_of(m), set()).add(package_of(t))
    assert _cycles(graph) == []


def test_the_table_itself_has_no_cycle() -> None:
    assert _cycles({k: set(v) for k, v in ALLOWED.items()}) == []


def test_the_cycle_check_can_fail() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return set(out.split())


@pytest.mark.parametrize(
    ("statement", "forbidden"),
    [
        # Reports are rebuilt from session files alone: nothing that runs things.
        ("import fsarena.report", ("fsarena.run", "fsarena.targets", "fsarena.tasks")),
        # The formats table is read at the CLI's start-up: no renderer, no statistics.
        (
            "import fsarena.report.formats",
            ("numpy", "scipy", "matplotlib", "jinja2", "pydantic", "fsarena.report.comparison"),
        ),
        # The guest agent runs inside an emulated kernel: no numpy, no scipy.
        ("import fsarena.guest.agent", ("numpy", "scipy", "matplotlib", "fsarena.report")),
        # The measuring process stays light: the collector is stdlib only.
        ("import fsarena.measure.collect", ("numpy", "scipy", "pydantic", "matplotlib")),
        # --help, list and check start fast: heavy libraries load where they are used, and
        # the commands' own machinery (pydantic models, the plan, the runner, the tasks)
        # when a command that needs it runs (issue 13: <= 0.2 s and <= 40 MB for --help).
        (
            "import fsarena.cli.commands",
            (
                "numpy",
                "scipy",
                "matplotlib",
                "jinja2",
                "pydantic",
                "fsarena.plan.model",
                "fsarena.run",
                "fsarena.tasks",
                "fsarena.session",
            ),
        ),
    ],
)
def test_transitive_loads(statement: str, forbidden: tuple[str, ...]) -> None:
    loaded = _loaded_after(statement)
    bad = sorted(m for m in loaded if any(m == f or m.startswith(f + ".") for f in forbidden))
    assert not bad, f"{statement} loads {bad[:8]}"


def test_cli_formats_are_the_formats_table() -> None:
    """--format's choices are report.formats' names, and each names a module that renders."""
    from fsarena.cli.args import FORMATS
    from fsarena.report import EXPORTERS
    from fsarena.report.formats import FORMATS as TABLE

    assert list(FORMATS) == sorted(f.name for f in TABLE) == sorted(EXPORTERS)
    assert len({f.suffix for f in TABLE}) == len(TABLE)  # one suffix a format
