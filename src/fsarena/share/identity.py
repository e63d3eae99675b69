"""Who sent a bundle, without saying who: pseudonyms keyed by a salt that never leaves the machine.

A shared view weighs each host once however many sessions it sent, and counts
a session sent twice once, so a bundle must say "the same host as before" and
"the same session as before" without naming either. A bundle's host is
HMAC-SHA256(salt, machine id) and its session HMAC-SHA256(salt, machine id,
start time), where the salt is 32 random bytes made on first use and kept in the
user's configuration directory ($XDG_CONFIG_HOME/fsarena/share-salt, else
~/.config/fsarena/share-salt, readable by the user alone). Without the salt the
pseudonym cannot be tied to a machine id or host name, even by trying every
host name there is; with it, the same user sharing from the same host gets the
same pseudonym every time. Another user (another salt) sharing the same host's
sessions counts as another host: the price of never sending the machine id.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from fsarena.errors import FsarenaError

SALT_FILE = "share-salt"
SALT_BYTES = 32


def config_dir() -> Path:
    """$XDG_CONFIG_HOME/fsarena, else ~/.config/fsarena (the XDG base directory rule)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "fsarena"


def salt(directory: Path | None = None) -> bytes:
    """The user's salt, made on first use (exclusive create: two shares at once agree)."""
    path = (directory or config_dir()) / SALT_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read(path)
    except OSError as exc:
        raise FsarenaError(
            f"cannot make the share salt {path}: {exc.strerror}; set XDG_CONFIG_HOME to a "
            "writable directory"
        ) from None
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_hex(SALT_BYTES) + "\n")
        f.flush()
        os.fsync(f.fileno())
    return _read(path)


def _read(path: Path) -> bytes:
    try:
        text = path.read_text().strip()
    except OSError as exc:
        raise FsarenaError(f"cannot read the share salt {path}: {exc.strerror}") from None
    try:
        value = bytes.fromhex(text)
    except ValueError:
        value = b""
    if len(value) < SALT_BYTES // 2:
        raise FsarenaError(
            f"{path} is not a share salt (64 hexadecimal digits); move it away and share "
            "again: a new one is made (your earlier bundles then count as another host)"
        )
    return value


def pseudonym(key: bytes, *parts: str) -> str:
    """HMAC-SHA256 of the parts under the salt, hexadecimal, 32 digits (128 bits)."""
    message = "\x1f".join(parts).encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:32]
