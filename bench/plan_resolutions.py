"""How often one plan's derived data is computed while it is made, launched and run (fake executor).

Usage: python bench/plan_resolutions.py   (from the checkout, no root needed)

Counts the calls of the functions that resolve a plan (catalog.scaled_specs,
the profile table, a profile, a task class) while one plan (article A, ext4 and
xfs, 2 rounds, scale 0.001) is made, its launch's size checks run, and the
Runner runs it through tests/fakes.py's FakeExecutor. The built-in suites'
own validation scales their datasets too; it is counted apart. Before issue 27
the plan resolved these again on every use.
"""

from __future__ import annotations

import sys
import tempfile
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.fakes

from tests.fakes import FakeExecutor

from fsarena.plan import catalog, model
from fsarena.run import launch
from fsarena.run.new_session import new_session
from fsarena.run.runner import Runner

CALLS: Counter[str] = Counter()


def counted(module: Any, name: str) -> None:
    real: Callable[..., Any] = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        suites = any(f.name == "builtin_suites" for f in traceback.extract_stack())
        CALLS[f"{name} (suite validation)" if suites else name] += 1
        return real(*args, **kwargs)

    setattr(module, name, wrapper)


def main() -> None:
    counted(catalog, "scaled_specs")
    for name in ("profile_table", "profile_for", "task_class"):
        counted(model, name)
    with tempfile.TemporaryDirectory(prefix="fsarena-bench-") as tmp:
        plan = model.make_plan("article-a-2006", ["ext4", "xfs"], 2, 0.001, 7, f"{tmp}/work")
        launch.data_bytes(plan)
        launch.space_needed(plan, "tmpfs")
        launch.unavailable_filesystems(plan)
        session = new_session(plan, {}, {})
        ex = FakeExecutor()
        Runner(plan, ex, session, Path(tmp) / "s.json", "tmpfs", datasets=ex.datasets).run()
    for name, n in sorted(CALLS.items()):
        print(f"{name:<36} {n:5d} calls")


if __name__ == "__main__":
    main()
