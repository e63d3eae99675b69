"""Verification of a copy against its dataset's manifest: same files, same bytes, nothing else.

Two implementations apply the same rules (see `verify`): the native helper
fsarena-verify (native/verify.c: a C walk and XXH3-128 (libxxhash) on two threads,
about as fast as reading the files), used when the caller passes its path, and
this module's Python one, the fallback when it was not built (no compiler). Both
return the same VerifyResult for the same tree; tests/unit/test_datasets.py (its
`check` fixture runs each test with both) checks it on damaged trees.

A copy is verified where it is (`verify_where`): here for the host's executor,
inside a guest kernel as its agent's job (JOBS), where the guest's filesystem is
mounted. The agent imports this module only when it is asked for one.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fsarena.datasets.manifest import FileEntry, Manifest, VerifyResult, file_digest
from fsarena.errors import FsarenaError
from fsarena.host.seams import Runtime, TaskExecutor
from fsarena.interrupt import deferred
from fsarena.measure.native import find_native_tool

_MAX_PROBLEMS = 20
# Inside a guest, as its untimed helpers (guest.host.CALL_TIMEOUT_S): a large copy's verify.
GUEST_VERIFY_TIMEOUT_S = 600.0


def verify(
    manifest: Manifest,
    root: Path,
    threads: int = 2,
    tool: str | None = None,
    content: bool = True,
) -> VerifyResult:
    """Check that root holds exactly the manifest's files and directories, byte for byte.

    Every expected file must exist as a regular file with the right size and
    XXH3-128 digest (hashed by `threads` threads); every expected directory must exist;
    anything else under root is reported as unexpected (without descending into
    unexpected directories, never following a symbolic link). `tool`: the path of
    fsarena-verify, which does it natively; None: in Python (hashlib releases the GIL).
    content False: names, kinds and sizes only, nothing is read (bytes_checked 0).
    """
    if threads < 1:
        raise FsarenaError(f"verify needs at least one thread, got {threads}")
    if not root.is_dir():
        return VerifyResult(False, 0, 0, (f"missing: {root} (the copy's root directory)",))
    if tool is not None:
        return _verify_native(tool, manifest, root, threads if content else 0)
    found = _scan(root, set(manifest.directories))
    problems = _structure_problems(manifest, found)
    to_hash = [f for f in manifest.files if found.get(f.path) == ("file", f.size_bytes)]
    if not content:
        return VerifyResult(not problems, len(to_hash), 0, _summarize(problems))
    with ThreadPoolExecutor(threads, thread_name_prefix="fsarena-verify") as pool:
        results = pool.map(lambda f: _check_content(root, f), to_hash)
        problems += [(f.path, p) for f, p in zip(to_hash, results, strict=True) if p]
    return VerifyResult(
        ok=not problems,
        files_checked=len(to_hash),
        bytes_checked=sum(f.size_bytes for f in to_hash),
        problems=_summarize(problems),
    )


def _scan(root: Path, expected_dirs: set[str]) -> dict[str, tuple[str, int]]:
    """Relative path -> (kind, size) of all under root; descends only into expected dirs."""
    found: dict[str, tuple[str, int]] = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            entries = list(os.scandir(root / rel if rel else root))
        except OSError:
            found[rel] = ("unreadable", 0)
            continue
        for entry in entries:
            path = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_dir(follow_symlinks=False):
                found[path] = ("dir", 0)
                if path in expected_dirs:
                    stack.append(path)
            elif entry.is_file(follow_symlinks=False):
                found[path] = ("file", entry.stat(follow_symlinks=False).st_size)
            else:
                found[path] = ("other", 0)
    return found


def _structure_problems(
    manifest: Manifest, found: dict[str, tuple[str, int]]
) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    for d in manifest.directories:
        kind = found.get(d, ("absent", 0))[0]
        messages = {"absent": f"missing: {d}/", "unreadable": f"unreadable: {d}/"}
        if kind != "dir":
            problems.append((d, messages.get(kind, f"not a directory: {d}")))
    for f in manifest.files:
        kind, size = found.get(f.path, ("absent", 0))
        if kind == "absent":
            problems.append((f.path, f"missing: {f.path}"))
        elif kind != "file":
            problems.append((f.path, f"not a regular file: {f.path}"))
        elif size != f.size_bytes:
            problems.append(
                (f.path, f"size differs: {f.path} ({size:,} bytes, expected {f.size_bytes:,})")
            )
    expected = set(manifest.directories) | {f.path for f in manifest.files}
    for path, (kind, _) in found.items():
        if path in expected:
            continue
        if kind == "unreadable":  # only the root can get here
            problems.append((path, f"unreadable: {path or '.'}/"))
        else:
            problems.append((path, f"unexpected: {path}{'/' if kind == 'dir' else ''}"))
    return problems


def _check_content(root: Path, entry: FileEntry) -> str | None:
    """A problem line if the file's digest differs from the manifest's, else None."""
    try:
        with open(root / entry.path, "rb", buffering=0) as f:
            digest = file_digest(f)
    except OSError as exc:
        return f"unreadable: {entry.path} ({exc.strerror})"
    return None if digest == entry.xxh128 else f"checksum differs: {entry.path}"


def _summarize(problems: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    lines = [message for _, message in sorted(problems)]
    if len(lines) <= _MAX_PROBLEMS:
        return tuple(lines)
    shown = lines[: _MAX_PROBLEMS - 1]
    return (*shown, f"... and {len(lines) - len(shown):,} more problems ({len(lines):,} in total)")


# fsarena-verify's problem codes -> the message the Python walk writes for the same case.
_NATIVE_MESSAGES = {
    "missing_dir": "missing: {path}/",
    "unreadable_dir": "unreadable: {path}/",
    "not_dir": "not a directory: {path}",
    "missing": "missing: {path}",
    "not_file": "not a regular file: {path}",
    "unexpected": "unexpected: {path}",
    "unexpected_dir": "unexpected: {path}/",
    "unreadable_root": "unreadable: ./",
    "checksum": "checksum differs: {path}",
    "unreadable": "unreadable: {path} ({detail})",
}


def _verify_native(tool: str, manifest: Manifest, root: Path, threads: int) -> VerifyResult:
    """verify() through fsarena-verify: the manifest in on stdin, problem records out."""
    with deferred() as held:  # a stop raised inside Popen would orphan the verifier
        proc = subprocess.Popen(
            [tool, str(root), str(threads)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    with proc:
        try:
            held.check()
            stdout, stderr = proc.communicate(manifest.verify_records)
        except BaseException:
            # Ctrl-C or SIGTERM: Python waits only 0.25 s for the child, and a verifier
            # still reading the copy keeps the filesystem busy; wait until it is gone.
            proc.kill()
            proc.wait()
            raise
    if proc.returncode != 0:
        message = stderr.decode(errors="replace").strip() or f"exit {proc.returncode}"
        raise FsarenaError(f"{tool} failed on {root}: {message}; run scripts/setup.sh again")
    problems: list[tuple[str, str]] = []
    checked = (0, 0)
    sizes: dict[str, int] = {}
    for record in stdout.decode(errors="surrogateescape").split("\0")[:-1]:
        code, detail, path = record.split("\t", 2)
        if code == "checked":
            checked = (int(detail), int(path.rstrip("\t")))
        elif code == "size":
            sizes = sizes or {f.path: f.size_bytes for f in manifest.files}  # when needed
            expected = sizes[path]
            message = f"size differs: {path} ({int(detail):,} bytes, expected {expected:,})"
            problems.append((path, message))
        else:
            problems.append((path, _NATIVE_MESSAGES[code].format(path=path, detail=detail)))
    return VerifyResult(not problems, checked[0], checked[1], _summarize(problems))


def verify_where(
    ex: TaskExecutor, manifest: Manifest, root: str, content: bool = True
) -> VerifyResult:
    """verify() where the copy is: inside the executor's guest kernel (a job), or here.

    Natively when fsarena-verify was built: on trees of small files the Python
    walk's per-file cost, not hashing, sets the pace.
    """
    if isinstance(ex, Runtime):
        args = {"manifest": manifest.to_dict(), "root": root, "content": content}
        result = ex.job(__name__, "verify", args, GUEST_VERIFY_TIMEOUT_S)
        return VerifyResult(
            bool(result["ok"]),
            int(result["files_checked"]),
            int(result["bytes_checked"]),
            tuple(result["problems"]),
        )
    return verify(manifest, Path(root), tool=find_native_tool("verify"), content=content)


def _verify_job(
    ex: TaskExecutor, manifest: dict[str, Any], root: str, content: bool = True
) -> dict[str, Any]:
    """The "verify" job: verify_where run inside a guest (a JSON manifest in, JSON out)."""
    return asdict(verify_where(ex, Manifest.from_dict(manifest), root, content))


JOBS: dict[str, Callable[..., Any]] = {"verify": _verify_job}
