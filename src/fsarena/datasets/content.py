"""The datasets' byte stream and its writer: pool slices XOR constants, written on two threads.

numpy is imported where buffers are made, never at import.
"""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from fsarena.datasets.manifest import new_digest
from fsarena.datasets.numeric import raw_words

if TYPE_CHECKING:
    import numpy as np
    import xxhash

    from fsarena.datasets.numeric import WordArray

MIB = 1 << 20
CHUNK_BYTES = MIB  # unit of content: one pool slice XOR one constant
POOL_BYTES = 16 * MIB
WRITE_BYTES = 4 * MIB  # large writes keep the per-syscall cost negligible
_RING_SLOTS = 8  # buffers in flight, so neither thread waits on the other's jitter
_CHUNK_WORDS = CHUNK_BYTES // 8
_POOL_WORDS = POOL_BYTES // 8
_WRITE_WORDS = WRITE_BYTES // 8


class ChunkContent:
    """The dataset's byte stream: chunk c = pool[offset_c : offset_c + 1 MiB] XOR constant_c.

    Offsets are 8-byte aligned and uniform over the pool; constants are random
    64-bit words, so no two chunks are byte-identical and nothing repeats
    within a compressor's window.
    """

    def __init__(self, stream: np.random.PCG64, chunks: int) -> None:
        import numpy as np

        self.pool = raw_words(stream, _POOL_WORDS)
        self.offsets: list[int] = (
            raw_words(stream, chunks) % np.uint64(_POOL_WORDS - _CHUNK_WORDS + 1)
        ).tolist()
        self.constants = raw_words(stream, chunks)

    def fill(self, chunk: int, out: WordArray) -> None:
        import numpy as np

        offset = self.offsets[chunk]
        np.bitwise_xor(self.pool[offset : offset + len(out)], self.constants[chunk], out=out)


class ChunkWriter:
    """Writes files from the content stream as a two-stage pipeline on two threads.

    The main thread fills a ring of 4 MiB buffers. A second thread either
    writes them (manifest cached: nothing to hash) or hashes them while the
    main thread writes (no cache): hashing sees the very buffers that were
    written, so files are never read back. A buffer is reused only once its
    second stage is done, and the FIFO second stage keeps each file's bytes
    in order.
    """

    def __init__(self, content: ChunkContent, stage: ThreadPoolExecutor, hashing: bool) -> None:
        import numpy as np

        self._content = content
        self._stage = stage
        self._hashing = hashing
        self._buffers = [np.empty(_WRITE_WORDS, dtype=np.uint64) for _ in range(_RING_SLOTS)]
        self._views = [b.data.cast("B") for b in self._buffers]
        self._pending: list[Future[None] | None] = [None] * _RING_SLOTS
        self._slot = 0

    def write_file(self, path: str, size_bytes: int, first_chunk: int) -> Future[str | None]:
        """Queue the file; its future gives its hex digest (None when not hashing)."""
        digest = new_digest() if self._hashing else None
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        try:
            for start in range(0, size_bytes, WRITE_BYTES):
                view = self._fill(first_chunk + start // CHUNK_BYTES, size_bytes - start)
                if digest is None:
                    self._pending[self._slot] = self._stage.submit(_write_all, fd, view)
                else:
                    _write_all(fd, view)
                    self._pending[self._slot] = self._stage.submit(digest.update, view)
                self._slot = (self._slot + 1) % _RING_SLOTS
        finally:
            done = self._stage.submit(_close, fd, digest)
        return done

    def drain(self) -> None:
        """Wait for the second stage; raise the first error it met."""
        for i, pending in enumerate(self._pending):
            if pending is not None:
                self._pending[i] = None
                pending.result()

    def _fill(self, first_chunk: int, left_bytes: int) -> memoryview:
        pending = self._pending[self._slot]
        if pending is not None:
            self._pending[self._slot] = None
            pending.result()
        n_bytes = min(WRITE_BYTES, left_bytes)
        buffer = self._buffers[self._slot]
        words = -(-n_bytes // 8)
        for start in range(0, words, _CHUNK_WORDS):
            stop = min(words, start + _CHUNK_WORDS)
            self._content.fill(first_chunk + start // _CHUNK_WORDS, buffer[start:stop])
        return self._views[self._slot][:n_bytes]


def _write_all(fd: int, view: memoryview) -> None:
    written = 0
    while written < len(view):
        written += os.write(fd, view[written:])


def _close(fd: int, digest: xxhash.xxh3_128 | None) -> str | None:
    os.close(fd)
    return None if digest is None else digest.hexdigest()
