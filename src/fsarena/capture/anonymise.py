"""Anonymised paths: every name replaced by a keyed hash, the tree's shape kept.

A trace leaves the production machine, so by default no name in it is the
service's own: each path component is replaced by HMAC-SHA256 under a key
drawn at random for this capture and never stored (the same name gives the
same hash within one trace, so the directory structure, the depth and which
files are the same survive; across captures nothing can be matched, and the
names cannot be recovered from the trace). An extension (up to eight letters or
digits after the last dot: ".db", ".wal", ".log") and a leading dot are kept:
a filesystem's cost does not depend on a name's letters, but a reader of the
trace learns what kind of file each is. Each name keeps its length in bytes,
which a filesystem's cost does depend on (a directory entry's size, how many
entries fit a block, when a directory changes form): a maildir's 60-byte names
hashed to 12 would make every directory several times smaller than the
service's. Two names never map to one: where the trace's names leave no unused
word of a length (36 of one character), the next length is taken.
`--no-anonymise` keeps the names.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import re
import secrets
from typing import Any

from fsarena.capture.trace import PATH_FIELDS, Trace

_EXTENSION = re.compile(r"^(?P<stem>.+?)(?P<ext>\.[A-Za-z0-9]{1,8})$")
# Lower case and digits: no two words differ by case alone (vfat, exfat and ntfs
# compare names without it).
ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
TRIES = 64  # draws at one length before the next length is taken


class Anonymiser:
    """Maps names and paths; `Anonymiser(None)` keeps them as they are."""

    def __init__(self, key: bytes | None) -> None:
        self.key = key
        self._names: dict[str, str] = {}
        self._taken: set[str] = set()  # every name given so far: no two names map to one

    @classmethod
    def fresh(cls) -> Anonymiser:
        """A key for one capture, from the system's random source, never written anywhere."""
        return cls(secrets.token_bytes(32))

    @property
    def active(self) -> bool:
        return self.key is not None

    def name(self, component: str) -> str:
        if self.key is None or component in ("", ".", ".."):
            return component
        found = self._names.get(component)
        if found is None:
            found = self._names[component] = self._hash(component)
        return found

    def _hash(self, component: str) -> str:
        assert self.key is not None
        dot = "." if component.startswith(".") else ""
        body = component[len(dot) :]
        match = _EXTENSION.match(body)
        stem, ext = (match["stem"], match["ext"]) if match else (body, "")
        raw = stem.encode("utf-8", "surrogateescape")
        length = len(raw)  # bytes: what the directory entry holds
        for draw in itertools.count():
            if draw and draw % TRIES == 0:
                length += 1  # no unused word of this length came: one longer
            name = f"{dot}{self._word(raw, draw, length)}{ext}"
            if name not in self._taken:
                self._taken.add(name)
                return name
        raise AssertionError("unreachable")

    def _word(self, raw: bytes, draw: int, length: int) -> str:
        """`length` characters of ALPHABET from the keyed hash of the name (and the draw)."""
        assert self.key is not None
        chars: list[str] = []
        for block in itertools.count():
            prefix = draw.to_bytes(4, "big") + block.to_bytes(4, "big")
            digest = hmac.new(self.key, prefix + raw, hashlib.sha256).digest()
            chars += (ALPHABET[b % len(ALPHABET)] for b in digest)
            if len(chars) >= length:
                return "".join(chars[:length])
        raise AssertionError("unreachable")

    def path(self, path: str) -> str:
        """Each component mapped; absolute stays absolute, relative (a link's target) relative."""
        if self.key is None:
            return path
        return "/".join(self.name(c) for c in path.split("/"))


def anonymised(trace: Trace, anonymiser: Anonymiser) -> Trace:
    """The trace with every path (tree, descriptors, events, link targets) mapped."""
    if not anonymiser.active:
        return trace
    path = anonymiser.path

    def tree_entry(e: list[Any]) -> list[Any]:
        return [e[0], path(e[1]), *([path(e[2])] if e[0] == "l" else e[2:])]

    def event(e: list[Any]) -> list[Any]:
        fields = PATH_FIELDS.get(e[4], ())
        return [path(v) if i in fields else v for i, v in enumerate(e)]

    preopened = [[*e[:4], path(e[4]), *e[5:]] for e in trace.preopened]
    return Trace(trace.header, [tree_entry(e) for e in trace.tree], preopened,
                 [event(e) for e in trace.events])  # fmt: skip
