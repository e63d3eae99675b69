"""Files fsarena derives from sessions (reports, their charts, comparisons): one rule for all.

A report is not a measurement: it can always be made again from its session. So
fsarena may replace a report it wrote itself, and nothing else:

- a path where nothing is, or an empty regular file (`mktemp`'s), may be written;
- a file or directory fsarena wrote, unchanged since, may be replaced: what it wrote
  is recorded in the directory's ledger of outputs (LEDGER, a hidden JSON file beside
  them: each name with the sha256 of its content, a directory with each of its files'),
  and "unchanged" means every byte still matches that record;
- anything else (the user's file, a directory holding one file more, a report the user
  edited, a symbolic link) is never deleted or replaced. A file the user named with
  --output may be replaced on purpose with --force; a file or directory derived from
  that name (the charts beside an HTML report) never.

Each file is written whole: to a temporary name in the same directory, then renamed
over the old one; a new name is taken with link(2), which fails rather than replace a
file that appeared meanwhile. The ledger is updated after the write, under a lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

from fsarena.errors import FsarenaError

# Not *.json: the directories it lands in are searched for session files by that suffix.
LEDGER = ".fsarena-outputs"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_ledger(directory: Path) -> dict[str, object]:
    try:
        raw = json.loads((directory / LEDGER).read_text())
    except (OSError, ValueError):
        return {}
    return raw if isinstance(raw, dict) else {}


def _file_matches(path: Path, recorded: object) -> bool:
    try:
        return isinstance(recorded, str) and _digest(path.read_bytes()) == recorded
    except OSError:
        return False


def _tree_matches(path: Path, recorded: object) -> bool:
    """Every entry of the directory is a regular file recorded with this content, and only those."""
    if not isinstance(recorded, dict):
        return False
    try:
        entries = list(path.iterdir())
    except OSError:
        return False
    names = {e.name for e in entries}
    if names != set(recorded):
        return False
    return all(
        not e.is_symlink() and e.is_file() and _file_matches(e, recorded[e.name]) for e in entries
    )


def wrote(path: Path) -> bool:
    """Whether fsarena wrote what is at path, and it is unchanged since (its ledger says)."""
    recorded = _read_ledger(path.parent).get(path.name)
    if path.is_symlink():
        return False
    if path.is_dir():
        return _tree_matches(path, recorded)
    return path.is_file() and _file_matches(path, recorded)


def replaceable(path: Path) -> bool:
    """Nothing is lost by writing at path: nothing there, an empty file or directory, or
    fsarena's own."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    if stat.S_ISREG(st.st_mode) and st.st_size == 0:
        return True
    if stat.S_ISDIR(st.st_mode) and not any(path.iterdir()):
        return True
    return wrote(path)


# What fsarena derives from a session file NAME.json, named after it, and what each is.
DERIVED = {
    ".html": "HTML report",
    "-charts": "report's chart directory",
    "-files": "directory of the tasks' kept files",
    "-states": "directory of kept crash states",
}


def derived(session_path: Path, suffix: str) -> Path:
    """A path derived from a session's (suffix: a key of DERIVED)."""
    return session_path.with_name(session_path.stem + suffix)


def in_the_way(session_path: Path) -> list[str]:
    """What sits where a new session's derived files would go and is not fsarena's to
    replace, in words ("results/x.html (HTML report)")."""
    from fsarena.session.journal import journal_of

    found = [(derived(session_path, s), what) for s, what in DERIVED.items()]
    # A journal there is a killed run's measurements (session/journal.py), never replaced.
    found.append((journal_of(session_path), "journal of a killed run's session"))
    return [f"{p} ({what})" for p, what in found if not replaceable(p)]


def not_ours(path: Path, what: str, fix: str) -> str:
    """The one line that refuses to replace or delete what fsarena did not write."""
    kind = "directory" if path.is_dir() and not path.is_symlink() else "file"
    return (
        f"{path} exists and is not a {what} fsarena wrote (or it changed since): fsarena "
        f"never replaces or deletes a {kind} it did not write; {fix}"
    )


def require_free(
    path: Path, what: str, fix: str = "move it away, or give another --output"
) -> None:
    """Refuse (FsarenaError) unless writing at path loses nothing."""
    if not replaceable(path):
        raise FsarenaError(not_ours(path, what, fix))


def write_file(path: Path, content: str | bytes, what: str, force: bool = False) -> None:
    """Write a derived file whole, where that loses nothing (or force: the user named it)."""
    data = content.encode() if isinstance(content, str) else content
    if not force:
        require_free(path, what)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, _mode(path))
        _put(Path(tmp), path, force)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _record(path.parent, {path.name: _digest(data)})


def write_tree(path: Path, files: Mapping[str, bytes], what: str) -> None:
    """Write a derived directory whole (a report's charts): fsarena's own, or a new one."""
    require_free(path, what, "move it away, or give the report another name")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    old = None
    try:
        for name, data in files.items():
            (tmp / name).write_bytes(data)
        tmp.chmod(0o755)
        if os.path.lexists(path):  # fsarena's own (checked above): moved aside, then deleted
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old.", dir=path.parent))
            os.replace(path, old / path.name)
        os.rename(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and not os.path.lexists(path):  # put back what was there
            with contextlib.suppress(OSError):
                os.replace(old / path.name, path)
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    _record(path.parent, {path.name: {n: _digest(d) for n, d in files.items()}})


def _mode(path: Path) -> int:
    """An empty file the user made keeps its mode (mktemp's 0600); a new one is 0644."""
    try:
        return stat.S_IMODE(os.lstat(path).st_mode)
    except OSError:
        return 0o644


def _put(tmp: Path, path: Path, replace: bool) -> None:
    """tmp under the name path: a new name with link(2), which never replaces a file that
    appeared since the check; what was checked replaceable, with rename(2)."""
    if not replace and not os.path.lexists(path):
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise FsarenaError(
                not_ours(path, "file", "it appeared while fsarena wrote; move it away")
            ) from None
        tmp.unlink()
        return
    os.replace(tmp, path)


def _record(directory: Path, written: Mapping[str, object]) -> None:
    """Add what was just written to the directory's ledger of outputs, under its lock.

    Rewritten in place under flock (a renamed file would leave a waiting writer locking
    the old one). A ledger that cannot be updated (the directory filled just now), or one
    a crash left half written, only means the file will not be replaced without --force
    next time: the file itself is whole.
    """
    with contextlib.suppress(OSError), open(directory / LEDGER, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        try:
            ledger = json.loads(handle.read() or "{}")
        except ValueError:
            ledger = {}
        ledger = {**(ledger if isinstance(ledger, dict) else {}), **written}
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(ledger, indent=1, sort_keys=True) + "\n")
        handle.flush()
