"""The flogfs log: its record format, parsing, and replaying records onto an image.

Format (native/flogfs.c): a 48-byte little-endian header {"FLOG", type, seq,
off, len, ts_ns, flags, payload_len} followed by payload_len bytes: the data
of a WRITE, the text of a MARK. PUNCH and ZERO (discard, write-zeroes) read
back as zeros, so they are replayed as zeros.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from fsarena.errors import FsarenaError

HEADER = struct.Struct("<4sIQQQQII")
MAGIC = b"FLOG"
WRITE, FSYNC, PUNCH, ZERO, MARK = 1, 2, 3, 4, 5
MUTATIONS = frozenset({WRITE, PUNCH, ZERO})
ZERO_CHUNK = bytes(1 << 20)


@dataclass(frozen=True, slots=True)
class Record:
    """One log record; the data of a WRITE stays in the log file (see FlogLog.data)."""

    type: int
    seq: int
    off: int
    len: int
    flags: int
    data_pos: int  # where the payload starts in the log file
    text: str = ""  # a MARK's text

    @property
    def is_mutation(self) -> bool:
        return self.type in MUTATIONS


@dataclass(frozen=True)
class LogSummary:
    records: int
    writes: int
    write_bytes: int
    flushes: int
    marks: int
    discards: int


class FlogLog:
    """A parsed log, its payloads mapped from the file; use as a context manager."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = open(path, "rb")  # noqa: SIM115 (closed by close())
        size = os.fstat(self._file.fileno()).st_size
        self._map = mmap.mmap(self._file.fileno(), size, prot=mmap.PROT_READ) if size else None
        self.records = list(self._parse(size))

    def _parse(self, size: int) -> Iterator[Record]:
        pos = 0
        view = self._map if self._map is not None else b""
        while pos < size:
            if pos + HEADER.size > size:
                raise FsarenaError(f"{self.path}: truncated record header at byte {pos}")
            magic, type_, seq, off, len_, _ts, flags, payload = HEADER.unpack_from(view, pos)
            if magic != MAGIC:
                raise FsarenaError(f"{self.path}: bad record magic at byte {pos}: not a flogfs log")
            start = pos + HEADER.size
            if start + payload > size:
                raise FsarenaError(f"{self.path}: truncated record payload at byte {pos}")
            text = (
                bytes(view[start : start + payload]).decode(errors="replace")
                if type_ == MARK
                else ""
            )
            yield Record(type_, seq, off, len_, flags, start, text)
            pos = start + payload

    def data(self, record: Record) -> memoryview | bytes:
        """What the record puts on the device: a WRITE's payload, zeros for PUNCH/ZERO."""
        if record.type == WRITE:
            assert self._map is not None
            return memoryview(self._map)[record.data_pos : record.data_pos + record.len]
        return bytes(record.len)

    def summary(self) -> LogSummary:
        writes = [r for r in self.records if r.type == WRITE]
        return LogSummary(
            records=len(self.records),
            writes=len(writes),
            write_bytes=sum(r.len for r in writes),
            flushes=sum(r.type == FSYNC for r in self.records),
            marks=sum(r.type == MARK for r in self.records),
            discards=sum(r.type in (PUNCH, ZERO) for r in self.records),
        )

    def close(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None
        self._file.close()

    def __enter__(self) -> FlogLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def apply(log: FlogLog, records: Iterable[Record], image: Path) -> None:
    """Apply mutation records, in the given order, to an image file."""
    fd = os.open(image, os.O_WRONLY)
    try:
        for record in records:
            if record.type == WRITE:
                _pwrite_all(fd, log.data(record), record.off)
            elif record.type in (PUNCH, ZERO):
                _write_zeros(fd, record.off, record.len)
    finally:
        os.close(fd)


def _pwrite_all(fd: int, data: memoryview | bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        done = os.pwrite(fd, view, offset)
        view, offset = view[done:], offset + done


def _write_zeros(fd: int, offset: int, length: int) -> None:
    while length > 0:
        chunk = min(length, len(ZERO_CHUNK))
        _pwrite_all(fd, ZERO_CHUNK[:chunk], offset)
        offset, length = offset + chunk, length - chunk


def files_equal(a: Path, b: Path, chunk: int = 4 << 20) -> bool:
    """Byte-for-byte equality of two image files."""
    if a.stat().st_size != b.stat().st_size:
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(chunk), fb.read(chunk)
            if x != y:
                return False
            if not x:
                return True
