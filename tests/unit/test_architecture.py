"""The architecture's allowed imports, enforced on the source (every import, also in functions).

- stats imports nothing of fsarena (pure functions over lists of floats);
- analysis and verdicts read sessions: results, stats, measure (METRICS) only;
- phrases (how results read) only stats and measure;
- reports: results, stats, measure (metric records only), analysis and verdicts,
  and each other; never runner, targets, tasks, or anything that runs commands.
analysis and verdicts sit beside stats, below report: the architecture names
verdicts.py as a module of its own, and the HTML report shows its verdicts.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "fsarena"
MEASURE_NAMES = {"METRICS", "Metric", "MeanKind", "Direction", "metric_value"}

ALLOWED: dict[str, set[str]] = {
    "fsarena.stats": set(),
    "fsarena.analysis": {"fsarena.measure", "fsarena.results", "fsarena.stats"},
    "fsarena.phrases": {"fsarena.measure", "fsarena.stats"},
    "fsarena.verdicts": {
        "fsarena.analysis",
        "fsarena.measure",
        "fsarena.phrases",
        "fsarena.results",
        "fsarena.stats",
    },
    "fsarena.report": {
        "fsarena.analysis",
        "fsarena.errors",
        "fsarena.measure",
        "fsarena.phrases",
        "fsarena.report",
        "fsarena.results",
        "fsarena.stats",
        "fsarena.verdicts",
        # The power-loss results as stored: pydantic records and pure statistics only
        # (crashtest/__init__ imports nothing); the rest of crashtest runs things.
        "fsarena.crashtest.records",
    },
}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[tuple[str, set[str]]]:
    """(module, names) for every fsarena import in a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(a.name, set()) for a in node.names if a.name.startswith("fsarena")]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fsarena"):
            assert node.module is not None
            names = {a.name for a in node.names}
            # "from fsarena.report import charts" imports the submodule fsarena.report.charts.
            found.append((node.module, names))
    return found


def layer(module: str) -> str | None:
    for name in ALLOWED:
        if module == name or module.startswith(name + "."):
            return name
    return None


def _top(module: str) -> str:
    return ".".join(module.split(".")[:2])


CASES = [p for p in sorted(SRC.rglob("*.py")) if layer(module_name(p))]


def test_every_layer_has_modules() -> None:
    assert {layer(module_name(p)) for p in CASES} == set(ALLOWED)


@pytest.mark.parametrize("path", CASES, ids=lambda p: module_name(p))
def test_allowed_imports(path: Path) -> None:
    me = layer(module_name(path))
    assert me is not None
    for module, names in imports(path):
        top = _top(module)
        allowed = top in ALLOWED[me] or module in ALLOWED[me]
        assert allowed, f"{module_name(path)} imports {module}: not allowed for {me}"
        if top == "fsarena.measure" and me == "fsarena.report":
            assert names <= MEASURE_NAMES, f"{module_name(path)} imports {names} from measure"


def test_reports_never_import_what_runs_things() -> None:
    forbidden = {"fsarena.runner", "fsarena.targets", "fsarena.tasks", "fsarena.executor"}
    for path in CASES:
        for module, _ in imports(path):
            assert _top(module) not in forbidden, f"{module_name(path)} imports {module}"


def test_the_check_catches_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from fsarena.tasks import TASKS\n    return TASKS\n")
    assert imports(bad) == [("fsarena.tasks", {"TASKS"})]
