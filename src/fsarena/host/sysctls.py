"""Kernel settings fsarena changes in files it does not own, and how each is put back.

A machine profile (machines/) writes to files shared with the rest of the
machine: the root blkio cgroup's throttle rules, vm.dirty_bytes, a cgroup v2
parent's subtree_control. Each change is a Setting: the file, what fsarena
writes, and what was there before, read just before writing. Its ident (JSON)
goes into the resource ledger before the write, so a fresh process can put
the previous value back after a kill -9 (`fsarena cleanup`).

Restoring is idempotent and careful: the previous value is written back only
while the file still holds what fsarena wrote. A file that holds anything else
was changed by someone since (or already restored), and is left alone; a file
that is gone (its device or cgroup removed) needs nothing.

Three file formats:
- plain: the whole file is one value (/proc/sys/vm/dirty_bytes);
- keyed: one "KEY VALUE" line per key, written one line at a time, an absent
  key reading as "0" (blkio.throttle.*_bps_device, keyed by MAJ:MIN; writing
  "KEY 0" removes the rule);
- controller: a cgroup v2 cgroup.subtree_control, the key a controller name,
  the value "+name" or "-name".

Standard library only: the ledger imports this module.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

Format = Literal["plain", "keyed", "controller"]


@dataclass(frozen=True)
class Setting:
    """One value fsarena writes into a shared file, and the value to put back."""

    path: str
    value: str  # what fsarena writes (for keyed files: the value for `key`)
    previous: str  # what was there before, written back on restore
    key: str = ""  # keyed files: the line's key (MAJ:MIN); controller files: the controller
    fmt: Format = "plain"
    # Where `previous` is written back, when not `path`: vm.dirty_bytes set over a
    # ratio is undone by writing the ratio back (which resets dirty_bytes to 0).
    restore_path: str = ""

    def ident(self) -> str:
        """The ledger's identifier: everything needed to restore, as sorted JSON."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_ident(cls, ident: str) -> Setting:
        return cls(**json.loads(ident))

    def describe(self) -> str:
        where = f"{self.path} [{self.key}]" if self.key else self.path
        return f"{where} = {self.value}"


def read_value(path: str, key: str = "", fmt: Format = "plain") -> str | None:
    """The file's current value (for a key); None when the file is gone."""
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        return None
    if fmt == "plain":
        return text.strip()
    if fmt == "controller":
        # The kernel lists enabled controllers by name ("cpu io memory").
        enabled = {word.lstrip("+") for word in text.split()}
        return f"+{key}" if key in enabled else f"-{key}"
    for line in text.splitlines():
        parts = line.split(None, 1)
        if parts and parts[0] == key:
            return parts[1].strip() if len(parts) > 1 else ""
    return "0"  # keyed throttle files: no rule for the key


def _write(path: str, value: str, key: str, fmt: Format) -> None:
    line = f"{key} {value}" if fmt == "keyed" else value
    Path(path).write_text(f"{line}\n")


def change(path: str, value: str, key: str = "", fmt: Format = "plain") -> Setting | None:
    """The Setting that writing `value` would be, or None when the file already holds it."""
    previous = read_value(path, key, fmt)
    if previous is None:
        raise FileNotFoundError(path)
    if previous == value:
        return None
    return Setting(path, value, previous, key, fmt)


def apply(setting: Setting) -> None:
    """Write the setting's value (the caller has recorded it in the ledger first)."""
    _write(setting.path, setting.value, setting.key, setting.fmt)


def restore(setting: Setting) -> str:
    """Put the previous value back if the file still holds ours; what was done, or ""."""
    current = read_value(setting.path, setting.key, setting.fmt)
    if current is None or current != setting.value:
        return ""
    _write(setting.restore_path or setting.path, setting.previous, setting.key, setting.fmt)
    return (
        f"restored {setting.restore_path or setting.path}"
        + (f" [{setting.key}]" if setting.key else "")
        + f" to {setting.previous}"
    )


def undo(ident: str) -> str:
    """The ledger's undo for kind "setting" (see ledger.UNDO)."""
    return restore(Setting.from_ident(ident))
