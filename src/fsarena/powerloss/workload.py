"""Workloads as data: short declarative scripts, their deterministic contents, and running them.

A workload is a TOML file (powerloss/workloads/*.toml) with a name, a
description, the paths whose unsynced fate is reported (`watch`) and a
script, one operation per line (or several, separated by `;`):

    mkdir P | write P SIZE [TAG] | append P SIZE [TAG] | overwrite P OFFSET SIZE [TAG]
    truncate P SIZE | fsync P | fdatasync P | rename A B | link A B | unlink P | sync
    repeat N: OP; OP; ...     (i = 1..N; {expr} and {expr:format} use i, e.g. {i*4096})

Paths are relative to the filesystem's root ("." is the root). Sizes take K
and M suffixes. Contents are pseudo-random bytes seeded by the SHA-256 of
"workload:path:tag" (the tag defaults to the operation's index), so every
version is distinct, never zero, and the oracle can recompute it. While it
runs, the workload writes the marker "op N" after operation N returns: the
log then tells exactly which operations had returned at each point.
"""

from __future__ import annotations

import ast
import ctypes
import hashlib
import operator
import os
import random
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from fsarena.errors import FsarenaError

# verb -> argument kinds; "tag" is optional and last.
VERBS: dict[str, tuple[str, ...]] = {
    "mkdir": ("path",),
    "write": ("path", "size", "tag"),
    "append": ("path", "size", "tag"),
    "overwrite": ("path", "offset", "size", "tag"),
    "truncate": ("path", "size"),
    "fsync": ("path",),
    "fdatasync": ("path",),
    "rename": ("path", "dest"),
    "link": ("path", "dest"),
    "unlink": ("path",),
    "sync": (),
}
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20}
_BRACES = re.compile(r"\{([^{}:]+)(?::([^{}]+))?\}")
_ARITH: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}


@dataclass(frozen=True)
class Op:
    """One operation of a workload script."""

    verb: str
    path: str = ""
    dest: str = ""
    size: int = 0
    offset: int = 0
    tag: str = ""

    def __str__(self) -> str:
        parts = [self.verb, self.path, self.dest]
        if self.verb == "overwrite":
            parts.append(str(self.offset))
        if self.verb in ("write", "append", "overwrite", "truncate"):
            parts.append(str(self.size))
        return " ".join(p for p in parts if p)


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    ops: tuple[Op, ...]
    watch: tuple[str, ...] = ()
    _cache: dict[int, bytes] = field(default_factory=dict, compare=False, repr=False)

    def data(self, index: int) -> bytes:
        """The bytes operation `index` writes (deterministic)."""
        if index not in self._cache:
            op = self.ops[index]
            tag = op.tag or f"#{index}"
            seed = hashlib.sha256(f"{self.name}:{op.path}:{tag}".encode()).digest()
            self._cache[index] = random.Random(int.from_bytes(seed, "big")).randbytes(op.size)
        return self._cache[index]


def _size(text: str, where: str) -> int:
    m = re.fullmatch(r"(\d+)([KM]?)", text)
    if not m:
        raise FsarenaError(f"{where}: {text!r} is not a size (e.g. 4096, 4K, 10M)")
    return int(m.group(1)) * UNITS[m.group(2)]


def _eval(expr: str, i: int, where: str) -> int:
    def ev(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name) and node.id == "i":
            return i
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
            return _ARITH[type(node.op)](ev(node.left), ev(node.right))
        raise FsarenaError(f"{where}: {{{expr}}} may use only i, integers and + - * // %")

    try:
        return ev(ast.parse(expr.strip(), mode="eval"))
    except SyntaxError:
        raise FsarenaError(f"{where}: {{{expr}}} is not an expression") from None


def _substitute(text: str, i: int, where: str) -> str:
    def one(m: re.Match[str]) -> str:
        return format(_eval(m.group(1), i, where), m.group(2) or "")

    return _BRACES.sub(one, text)


def _check_path(path: str, where: str) -> str:
    if path.startswith("/") or ".." in path.split("/") or "{" in path:
        raise FsarenaError(f"{where}: path {path!r} must be relative, without .. or braces")
    return path


def parse_op(text: str, where: str) -> Op:
    words = text.split()
    verb, args = words[0], words[1:]
    kinds = VERBS.get(verb)
    if kinds is None:
        raise FsarenaError(f"{where}: unknown operation {verb!r}; known: {', '.join(VERBS)}")
    required = [k for k in kinds if k != "tag"]
    if not len(required) <= len(args) <= len(kinds):
        raise FsarenaError(f"{where}: {verb} takes {' '.join(kinds)} (tag optional)")
    values: dict[str, str | int] = {}
    for kind, arg in zip(kinds, args, strict=False):
        if kind in ("size", "offset"):
            values[kind] = _size(arg, where)
        elif kind in ("path", "dest"):
            values[kind] = _check_path(arg, where)
        else:
            values[kind] = arg
    return Op(verb, **values)  # type: ignore[arg-type]


def parse_script(script: str, source: str) -> tuple[Op, ...]:
    ops: list[Op] = []
    for number, raw in enumerate(script.splitlines(), start=1):
        where = f"{source} line {number}"
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"repeat\s+(\d+)\s*:(.*)", line)
        if m:
            for i in range(1, int(m.group(1)) + 1):
                body = _substitute(m.group(2), i, where)
                ops.extend(parse_op(p, where) for p in body.split(";") if p.strip())
        else:
            ops.extend(parse_op(p, where) for p in line.split(";") if p.strip())
    if not ops:
        raise FsarenaError(f"{source}: the script has no operations")
    return tuple(ops)


def parse_workload(text: str, source: str) -> Workload:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise FsarenaError(f"{source} is not valid TOML: {exc}") from None
    unknown = set(data) - {"name", "description", "watch", "script"}
    if unknown or not isinstance(data.get("name"), str) or "script" not in data:
        raise FsarenaError(
            f"{source}: a workload has name, description, watch and script"
            + (f" (unknown: {', '.join(sorted(unknown))})" if unknown else "")
        )
    ops = parse_script(str(data["script"]), source)
    watch = tuple(str(p) for p in data.get("watch", []))
    touched = {op.path for op in ops} | {op.dest for op in ops}
    missing = [p for p in watch if p not in touched]
    if missing:
        raise FsarenaError(f"{source}: watched paths no operation writes: {', '.join(missing)}")
    return Workload(data["name"], " ".join(str(data.get("description", "")).split()), ops, watch)


def builtin_workloads() -> dict[str, Workload]:
    """The shipped workloads, in file-name order."""
    folder = resources.files("fsarena.powerloss").joinpath("workloads")
    found = [
        parse_workload(entry.read_text(), f"workload {entry.name}")
        for entry in sorted(folder.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".toml")
    ]
    return {w.name: w for w in found}


def select(names: list[str] | None) -> list[Workload]:
    """Workloads by name (all when None); an unknown name is an error naming the known ones."""
    known = builtin_workloads()
    if not names:
        return list(known.values())
    unknown = [n for n in names if n not in known]
    if unknown:
        raise FsarenaError(f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return [known[n] for n in dict.fromkeys(names)]


# ---------------------------------------------------------------- running


_LIBC = ctypes.CDLL(None, use_errno=True)


def _syncfs(path: Path) -> None:
    """syncfs(2) of the filesystem under test only (sync(2) would flush every disk here)."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if _LIBC.syncfs(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), str(path))
    finally:
        os.close(fd)


def _write(path: Path, flags: int, data: bytes, offset: int | None = None) -> None:
    fd = os.open(path, flags, 0o644)
    try:
        view = memoryview(data)
        while view:
            done = os.pwrite(fd, view, offset) if offset is not None else os.write(fd, view)
            view = view[done:]
            if offset is not None:
                offset += done
    finally:
        os.close(fd)


def _sync_file(path: Path, sync: Callable[[int], None]) -> None:
    flags = os.O_RDONLY | (os.O_DIRECTORY if path.is_dir() else 0)
    fd = os.open(path, flags)
    try:
        sync(fd)
    finally:
        os.close(fd)


def perform(op: Op, root: Path, data: bytes) -> None:
    """Carry out one operation on the mounted filesystem."""
    p = root / op.path
    if op.verb == "mkdir":
        p.mkdir()
    elif op.verb == "write":
        _write(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, data)
    elif op.verb == "append":
        _write(p, os.O_WRONLY | os.O_APPEND, data)
    elif op.verb == "overwrite":
        _write(p, os.O_WRONLY, data, op.offset)
    elif op.verb == "truncate":
        os.truncate(p, op.size)
    elif op.verb == "fsync":
        _sync_file(p, os.fsync)
    elif op.verb == "fdatasync":
        _sync_file(p, os.fdatasync)
    elif op.verb == "rename":
        os.rename(p, root / op.dest)
    elif op.verb == "link":
        os.link(p, root / op.dest)
    elif op.verb == "unlink":
        p.unlink()
    elif op.verb == "sync":
        _syncfs(root)
    else:  # parse_op admits only VERBS
        raise AssertionError(op.verb)


def run(workload: Workload, root: Path, mark: Path) -> None:
    """Run the script on the filesystem at root, writing "op N" to the marker file after each."""
    fd = os.open(mark, os.O_WRONLY)
    try:
        for index, op in enumerate(workload.ops):
            try:
                perform(op, root, workload.data(index))
            except OSError as exc:
                raise FsarenaError(
                    f"workload {workload.name}, operation {index} ({op}) failed: {exc}"
                ) from exc
            os.write(fd, f"op {index}".encode())
    finally:
        os.close(fd)
