"""Benchmark: where fsarena's own time goes in a real run, step by step.

Not a test (root). Runs `fsarena run` in this process (the default comparison,
or whatever options follow `--`) with a stopwatch around each host-side step
the runner takes besides the timed tasks: the executor's untimed calls (mounts,
device flushes, images, copy verification, commands such as mkfs's helpers),
the session saves, the adaptive analysis between rounds. The timed tasks
themselves (Executor.measure) are counted apart. Prints, per step, calls,
total seconds and share of the run's wall time, largest first: the list to
work down when bench/own_time.py says the share outside timed tasks is too
high. Steps nest (executor.call runs through executor.output; the cold
caches and the reports contain executor calls), so the shares do not add up
to 100 %. The stopwatch costs about a microsecond a call.

    sudo .venv/bin/python bench/where_time_goes.py --workdir /var/tmp/fsarena-bench/w \\
        --results-dir /var/tmp/fsarena-bench/r [-- --scale 0.25 --repetitions 3]
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import fsarena.run.runner as runner_module
import fsarena.run.scope as scope_module
import fsarena.run.sequence as sequence_module
from fsarena.analysis import adaptive
from fsarena.cli import executing, running
from fsarena.cli.commands import main as fsarena_main
from fsarena.host.executor import RealExecutor
from fsarena.run import cold
from fsarena.session import file as session_file

SPENT: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])


def watched(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            entry = SPENT[name]
            entry[0] += 1
            entry[1] += time.perf_counter() - start

    return wrapper


def install() -> None:
    skip = {"track", "untrack", "exists"}
    for name, fn in list(vars(RealExecutor).items()):
        if callable(fn) and not name.startswith("_") and name not in skip:
            setattr(RealExecutor, name, watched(f"executor.{name}", fn))
    for name in ("undecided", "imprecise"):
        wrapped = watched(f"analysis.{name}", getattr(adaptive, name))
        setattr(runner_module, name, wrapped)
    # These contain executor calls, counted again under their own names.
    nested: list[tuple[Any, str, str, Callable[..., Any]]] = [
        (scope_module, "save", "session save", session_file.save),
        (sequence_module, "make_cold", "cold caches (all of it)", cold.make_cold),
        (running, "write_reports", "reports after the run", executing.write_reports),
    ]
    for module, attr, label, fn in nested:
        setattr(module, attr, watched(label, fn))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--results-dir", required=True)
    args, rest = parser.parse_known_args()
    extra = rest[1:] if rest[:1] == ["--"] else rest
    install()
    argv = ["fsarena", "run", "--workdir", args.workdir, "--results-dir", args.results_dir]
    sys.argv = [*argv, *extra]
    started = time.perf_counter()
    code = 0
    try:
        fsarena_main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    total = time.perf_counter() - started
    print(f"\nwhole run: {total:.1f} s (exit {code}); per step, largest first:")
    for name, (calls, spent) in sorted(SPENT.items(), key=lambda kv: -kv[1][1]):
        print(f"  {name:<32} {int(calls):6d} calls {spent:8.1f} s {spent / total:6.1%}")
    sys.exit(code)


if __name__ == "__main__":
    main()
