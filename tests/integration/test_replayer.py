"""The native replayer (native/replay.c) on a real filesystem: the program `setup` saves in
its loaded form (PROGRAM.bin) replays as the text does, and a stale or damaged one is
never trusted.

`setup` parses the text program, makes the initial tree and saves the parsed arrays;
`run`, the timed process, reads them back in one read() instead of parsing again, so a
replay's time holds the calls, not the parse of a trace that grows with its length.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from fsarena.capture import trace
from fsarena.capture.program import Compiler
from fsarena.measure.native import native_tool

O_WRONLY, O_CREAT = 0o1, 0o100


def _events(files: int) -> list[list[Any]]:
    """mkdir, then per file: create, write, close, rename, stat; every other one unlinked."""
    out: list[list[Any]] = [[0, 1000, 1, 1, "mkdir", 0, "/srv/d", -1, 0o755, 0]]
    t = 10
    for i in range(files):
        path, moved = f"/srv/d/f{i}", f"/srv/d/g{i}"
        out += [
            [t, 1000, 1, 1, "open", 3, i, path, -1, O_WRONLY | O_CREAT, 0o644, 0],
            [t + 2, 1000, 1, 1, "write", 100, 3, i, 0, 100, 0],
            [t + 4, 1000, 1, 1, "close", 0, 3, i, 1, 0, 0],
            [t + 6, 1000, 1, 1, "rename", 0, path, -1, moved, -1, 0, 0],
            [t + 8, 1000, 1, 1, "stat", 0, moved, -1, 0, 0],
        ]
        if i % 2:
            out.append([t + 9, 1000, 1, 1, "unlink", 0, moved, -1, 0, 0])
        t += 10
    return out


def _program(tmp: Path, files: int = 300) -> Path:
    t = trace.Trace({"duration_s": 1.0}, tree=[["d", "/srv"]], events=_events(files))
    path = tmp / "p.prog"
    path.write_text(Compiler(t).compile())
    return path


def _replay(
    program: Path, root: Path, setup: bool = True, drop_loaded: bool = False
) -> subprocess.CompletedProcess[str]:
    tool = native_tool("replay")
    if setup:
        root.mkdir()
        subprocess.run([tool, "setup", str(program), str(root), "1.0"], check=True)
    if drop_loaded:
        program.with_name(program.name + ".bin").unlink()
    result = root.parent / f"{root.name}.json"
    return subprocess.run([tool, "run", str(program), str(root), "1.0", "fast", str(result)],
                          capture_output=True, text=True, check=False)  # fmt: skip


def _figures(root: Path) -> dict[str, Any]:
    r = json.loads((root.parent / f"{root.name}.json").read_text())
    return {"ops": r["ops"], "diverged": r["diverged"],
            "calls": {k: (v["count"], v["diverged"]) for k, v in r["calls"].items()}}  # fmt: skip


def test_the_loaded_program_replays_as_the_text_does(tmp_path: Path) -> None:
    program = _program(tmp_path)
    loaded = program.with_name("p.prog.bin")
    done = _replay(program, tmp_path / "a")
    assert done.returncode == 0, done.stderr
    assert loaded.stat().st_size > 0, "setup saves the parsed program"
    from_binary = _figures(tmp_path / "a")
    loaded.unlink()  # and setup again without it: the text is parsed, as before
    done = _replay(program, tmp_path / "b", drop_loaded=True)
    assert done.returncode == 0, done.stderr
    assert not loaded.exists()
    assert from_binary == _figures(tmp_path / "b")
    assert from_binary["ops"] == 1 + 300 * 5 + 150 and from_binary["diverged"] == 0
    assert from_binary["calls"]["rename"] == (300, 0)
    # The percentiles come from each call type's latencies sorted (a radix sort): in order,
    # the largest the maximum, and all calls' median among the types' own.
    result = json.loads((tmp_path / "a.json").read_text())
    for name, call in result["calls"].items():
        assert 0 < call["p50_ns"] <= call["p99_ns"] <= call["p999_ns"] <= call["max_ns"], name
        assert call["max_ns"] <= call["total_ns"] <= call["max_ns"] * call["count"], name
    p50s = [c["p50_ns"] for c in result["calls"].values()]
    assert min(p50s) <= result["p50_ns"] <= max(p50s)
    assert sorted(p.name for p in (tmp_path / "a" / "srv" / "d").iterdir()) == sorted(
        f"g{i}" for i in range(0, 300, 2)
    )


def test_a_stale_loaded_program_is_not_trusted(tmp_path: Path) -> None:
    """The text changed since setup saved its loaded form: run parses the text."""
    program = _program(tmp_path, files=10)
    tool = native_tool("replay")
    (tmp_path / "a").mkdir()
    subprocess.run([tool, "setup", str(program), str(tmp_path / "a"), "1.0"], check=True)
    program.write_text(program.read_text().replace("fsarena-replay-program 1", "not a program"))
    done = _replay(program, tmp_path / "a", setup=False)
    assert done.returncode == 2 and "not a version 1 program" in done.stderr, done.stderr


def test_a_damaged_loaded_program_is_refused_in_one_line(tmp_path: Path) -> None:
    program = _program(tmp_path, files=10)
    tool = native_tool("replay")
    (tmp_path / "a").mkdir()
    subprocess.run([tool, "setup", str(program), str(tmp_path / "a"), "1.0"], check=True)
    loaded = program.with_name("p.prog.bin")
    stamp = os.stat(program)
    with loaded.open("r+b") as f:
        f.truncate(loaded.stat().st_size - 40)
    os.utime(program, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    done = _replay(program, tmp_path / "a", setup=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().count("\n") == 0 and "run setup again" in done.stderr
