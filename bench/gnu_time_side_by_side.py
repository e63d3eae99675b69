"""fsarena's max RSS beside GNU time's for every task of a real run, on the same executions.

Runs `fsarena run` in this process with every timed command wrapped in
`/usr/bin/time -f %M`, so GNU time and fsarena measure one and the same
execution of each task's command, in the run's own state. Prints, per task and
filesystem, fsarena's max RSS (KiB), GNU time's and their ratio. GNU time's own
process is inside fsarena's figure (max RSS is a maximum, so it shows only if
the command is smaller than GNU time itself, about 1 MiB).

    sudo .venv/bin/python bench/gnu_time_side_by_side.py --fs ext4,xfs --scale 0.05 -n 2 \\
        --workdir /var/tmp/fsarena-i12/w --results-dir /var/tmp/fsarena-i12/r
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import fsarena.host.executor
from fsarena.cli.commands import main
from fsarena.measure.collect import Command, Timed, measure_commands

PAIRS: list[tuple[int | None, int]] = []
UNTIMED = {"fio"}  # the device ceiling is measured through the same seam; no task row


def _gnu_time_wrapped(commands: Sequence[Command], device: str | None, timeout_s: float) -> Timed:
    outs = [tempfile.NamedTemporaryFile("r", prefix="gnutime-") for _ in commands]  # noqa: SIM115
    wrapped = [
        Command(("/usr/bin/time", "-f", "%M", "-o", out.name, *c.argv), c.stdout_path, c.cwd)
        for c, out in zip(commands, outs, strict=True)
    ]
    timed = measure_commands(wrapped, device, timeout_s)
    gnu = [int(t.split()[-1]) for out in outs if (t := out.read().strip())]
    for out in outs:
        out.close()
    if commands[0].argv[0] not in UNTIMED:
        PAIRS.append((timed.measurement.max_rss_kib, max(gnu, default=0)))
    print("measured:", commands[0].argv[:3], timed.measurement.max_rss_kib, gnu, flush=True)
    return timed


def _table(session_path: Path) -> None:
    session = json.loads(session_path.read_text())
    runs = [r for r in session["runs"] if r.get("measurement")]
    assert len(runs) == len(PAIRS), (len(runs), len(PAIRS))
    rows: dict[tuple[str, str], list[tuple[int | None, int]]] = {}
    for run, pair in zip(runs, PAIRS, strict=True):
        rows.setdefault((run["task"], run["filesystem"]), []).append(pair)
    print(f"{'task':22} {'fs':5} {'fsarena KiB':>20} {'GNU time KiB':>20} {'worst ratio':>11}")
    for (task, fs), pairs in rows.items():
        ours = "/".join(str(a) for a, _ in pairs)
        theirs = "/".join(str(b) for _, b in pairs)
        worst = max(abs((a or 0) / b - 1) for a, b in pairs if b)
        print(f"{task:22} {fs:5} {ours:>20} {theirs:>20} {100 * worst:>9.1f} %")


if __name__ == "__main__":
    # The executor calls measure_commands by its module-level name: rebind it there.
    setattr(fsarena.host.executor, "measure_commands", _gnu_time_wrapped)  # noqa: B010
    results = Path(sys.argv[sys.argv.index("--results-dir") + 1])
    try:
        main(["run", *sys.argv[1:]], standalone_mode=False)
    finally:
        _table(max(results.glob("*.json"), key=lambda p: p.stat().st_mtime))
