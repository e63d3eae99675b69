"""Benchmark: the cost of one session save, the runner's per-run write, old way beside new.

Not a test. The runner saves the whole session after every run so that a
crash, Ctrl-C or a test watching the file loses nothing; a default run makes
about 650 runs, so the last saves write the biggest file. This builds a
session of --runs runs from the full-v2 fixture's runs (copied), then
alternates, --rounds times each, the save before issue 14's last stop
(`model_dump(mode="json")` then `json.dumps(indent=1, sort_keys=True)`, written
atomically with fsync) and `fsarena.session.file.save` (pydantic's encoder,
same atomic write). Prints each one's median and the ratio new / old (the
target: well below 1), and checks that both files hold the same JSON.

    .venv/bin/python bench/session_save.py [--runs 650] [--rounds 15] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from fsarena.session.file import Session, load, save

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "full-v2.json"


def old_save(session: Session, path: Path) -> None:
    """The save as it was: a dictionary, then the standard library's indented encoder."""
    data = json.dumps(session.model_dump(mode="json"), indent=1, sort_keys=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w") as f:
        f.write(data + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=650)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--dir", default="/var/tmp", help="where the files are written")
    args = parser.parse_args()
    session = load(FIXTURE)
    model = list(session.runs)
    while len(session.runs) < args.runs:
        session.runs.extend(r.model_copy(deep=True) for r in model)
    del session.runs[args.runs :]
    work = Path(tempfile.mkdtemp(prefix="fsarena-save-", dir=args.dir))
    try:
        times: dict[str, list[float]] = {"old": [], "new": []}
        for _ in range(args.rounds):
            for name, fn in (("old", old_save), ("new", save)):
                start = time.perf_counter()
                fn(session, work / f"{name}.json")
                times[name].append(time.perf_counter() - start)
        same = json.loads((work / "old.json").read_text()) == json.loads(
            (work / "new.json").read_text()
        )
        size = (work / "new.json").stat().st_size
        old, new = (statistics.median(times[k]) for k in ("old", "new"))
        print(f"session of {len(session.runs)} runs, {size / 1e6:.2f} MB, {args.rounds} rounds")
        print(f"  old save (json.dumps, indented, sorted): median {old * 1e3:.1f} ms")
        print(f"  new save (pydantic's encoder):           median {new * 1e3:.1f} ms")
        print(f"  new / old: {new / old:.2f}x; same JSON: {'yes' if same else 'NO'}")
    finally:
        for f in work.iterdir():
            f.unlink()
        work.rmdir()


if __name__ == "__main__":
    main()
