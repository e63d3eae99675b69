"""Dataset manifests: exactly what a dataset holds (paths, sizes, XXH3-128), and a copy's check.

A manifest is plain data (no numpy): plan, tasks, the CLI and the guest agent
read and compare manifests without loading the generators.

The content digest is XXH3-128 (xxHash), not a cryptographic hash: a copy's
check detects corruption and mistakes, not an adversary (rsync >= 3.2 checks
its transfers with the same xxh128), and it hashes at memory speed, so
verifying a large file costs about what reading it does (SHA-256, the digest
before manifest version 2, bounded it at 0.4x of dd's read here). The native
verifier (native/verify.c, libxxhash) and the Python fallback (the xxhash
package) compute the same digest: the canonical big-endian 16 bytes, in hex.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import json
from dataclasses import dataclass
from typing import BinaryIO

import xxhash

from fsarena.errors import FsarenaError

# What a manifest's file digests are; recorded in the session's method text.
DIGEST_ALGORITHM = "XXH3-128"
# Part of every dataset's spec_hash (fsarena.datasets.spec): bumping it retires every
# cached manifest and real tree's digests, which are then recomputed. 2: XXH3-128
# instead of SHA-256.
MANIFEST_VERSION = 2


def new_digest() -> xxhash.xxh3_128:
    """A fresh content digest (update(), hexdigest()), as the manifests record."""
    return xxhash.xxh3_128()


def file_digest(f: BinaryIO) -> str:
    """The content digest of an open binary file, read from its current position."""
    digest = new_digest()
    while chunk := f.read(1 << 20):
        digest.update(chunk)
    return digest.hexdigest()


def bytes_digest(data: bytes) -> str:
    """The content digest of bytes in memory."""
    return xxhash.xxh3_128_hexdigest(data)


@dataclass(frozen=True)
class FileEntry:
    """One file of a dataset: relative POSIX path, size and XXH3-128 (32 hex digits)."""

    path: str
    size_bytes: int
    xxh128: str


@dataclass(frozen=True)
class Manifest:
    """Exactly what a dataset holds: its files (sorted by path) and directories (sorted).

    `directories` excludes the dataset's root. `digest()` identifies the exact
    content, so two runs with equal digests copied the same bytes.
    """

    name: str
    spec_hash: str
    files: tuple[FileEntry, ...]
    directories: tuple[str, ...]

    def __post_init__(self) -> None:
        paths = [f.path for f in self.files]
        if paths != sorted(paths) or list(self.directories) != sorted(self.directories):
            raise ValueError("Manifest files and directories must be sorted by path")

    @property
    def total_bytes(self) -> int:
        return sum(f.size_bytes for f in self.files)

    @functools.cached_property
    def verify_records(self) -> bytes:
        """The manifest as fsarena-verify reads it on stdin ("d PATH", "f SIZE XXH128 PATH").

        Built once per manifest: a run verifies each dataset's copies many times,
        and for a Portage tree building them cost 11 ms a call (the whole check
        about 100 ms).
        """
        records = [f"d {d}\0" for d in self.directories]
        records += [f"f {f.size_bytes} {f.xxh128} {f.path}\0" for f in self.files]
        return "".join(records).encode(errors="surrogateescape")

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "spec_hash": self.spec_hash,
            "files": [
                {"path": f.path, "size_bytes": f.size_bytes, "xxh128": f.xxh128} for f in self.files
            ],
            "directories": list(self.directories),
        }

    @classmethod
    def from_dict(cls, d: dict[str, object]) -> Manifest:
        """Rebuild a manifest from `to_dict()` output; FsarenaError if it is malformed."""
        try:
            raw_files = d["files"]
            raw_dirs = d["directories"]
            if not isinstance(raw_files, list) or not isinstance(raw_dirs, list):
                raise TypeError("files and directories must be lists")
            files = [_file_entry(f) for f in raw_files]
            return cls(
                name=str(d["name"]),
                spec_hash=str(d["spec_hash"]),
                files=tuple(sorted(files, key=lambda f: f.path)),
                directories=tuple(sorted(str(p) for p in raw_dirs)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise FsarenaError(
                f"malformed dataset manifest ({exc!r}); delete it to have it regenerated"
            ) from exc

    def digest(self) -> str:
        """SHA-256 of the canonical JSON (sorted keys, no spaces) of `to_dict()`."""
        return hashlib.sha256(canonical_json(self.to_dict())).hexdigest()

    def count_matching(self, pattern: str) -> int:
        """Files whose basename matches an fnmatch wildcard, as `find -name PATTERN` counts them.

        Case-sensitive like find; only files count (no directory name contains a dot).
        """
        return sum(1 for f in self.files if fnmatch.fnmatchcase(f.path.rsplit("/", 1)[-1], pattern))


def _file_entry(obj: object) -> FileEntry:
    if not isinstance(obj, dict):
        raise TypeError(f"expected a file entry, got {obj!r}")
    return FileEntry(str(obj["path"]), _as_int(obj["size_bytes"]), str(obj["xxh128"]))


def _as_int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {value!r}")
    return value


def canonical_json(obj: object) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


@dataclass(frozen=True)
class VerifyResult:
    """Outcome of comparing a copy with its manifest.

    files_checked and bytes_checked count the files whose content was hashed
    (present, regular, right size). `problems` holds at most 20 human-readable
    lines, sorted by path ("missing: d001/f000003.pdf", "size differs: ...",
    "checksum differs: ...", "unexpected: ..."; directories end in "/"); when
    there are more, the last line says how many were left out.
    """

    ok: bool
    files_checked: int
    bytes_checked: int
    problems: tuple[str, ...]
