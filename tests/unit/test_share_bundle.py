"""A bundle carries every result and nothing that says where or by whom: checked byte by byte.

Every session recorded in the test suite (one per schema version, and the larger ones)
is given a distinctive host name, machine id, user, paths, device names, models,
serials, kernel build and an IP address, in the fields that hold them and also in the
free texts that may quote them (errors, check details, warnings, dataset origins,
fio's argv, notes). No byte of any of them may appear in its bundle. The bundle must
verify, keep every run's figures, and stop verifying when any one value changes.
tests/integration/test_share_real.py does the same with a session `fsarena run` records.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fsarena.cli.commands import main
from fsarena.errors import FsarenaError
from fsarena.session.file import Session, load
from fsarena.share.bundle import build, canonical, dumps, make, read, seal, verify
from fsarena.share.identity import salt

FIXTURES = Path(__file__).parent.parent / "fixtures"
SESSIONS = [
    "session-v1.json",
    "session-v2.json",
    "session-v3.json",
    "session-v4.json",
    "three-filesystems.json",
    "full-v2.json",
]
KEY = bytes(range(32))
ORIGINALS = {
    "host name": "zqhost-7781.corp.example",
    "machine id": "feedfacecafebeef0123456789abcdef",
    "user": "zquser",
    "work directory": "/home/zquser/zq-bench-4411/work",
    "backing device": "/dev/zq-nvme9n1",
    "mount point": "/zq-mount-2231",
    "model": "ZQ-MODEL-5521",
    "serial": "ZQSERIAL8812",
    "device": "/dev/zq-sdz9",
    "device model": "ZQTARGET-3311",
    "kernel release": "6.1.0-zqbuild-77",
    "kernel build": "#1 SMP zqbuilder@zqbuildhost 2026",
    "IP address": "10.77.66.55",
}
# Pieces of them that are distinctive on their own (a path's last part, the user).
PIECES = ("zqhost", "7781", "zq-bench-4411", "zq-nvme9n1", "zq-mount-2231", "zq-sdz9",
          "zqbuild", "zqbuilder", "10.77.66", "feedfacecafebeef")  # fmt: skip


def disguised(name: str) -> Session:
    """A recorded session with every identifying field, and free texts quoting them, set to
    the distinctive originals."""
    raw: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    o = ORIGINALS
    quote = (
        f"{o['work directory']}/mnt on {o['backing device']} ({o['IP address']}, {o['host name']})"
    )
    raw["host"].update(
        hostname=o["host name"], machine_id=o["machine id"], workdir=o["work directory"],
        kernel=o["kernel release"], kernel_build=o["kernel build"],
    )  # fmt: skip
    raw["host"]["workdir_backing"] = {
        "device": o["backing device"], "fstype": "ext4", "mountpoint": o["mount point"],
        "model": o["model"],
    }  # fmt: skip
    raw["target"] = {
        "kind": "block-device", "path": o["device"], "model": o["device model"],
        "serial": o["serial"], "size_bytes": 1 << 30,
    }  # fmt: skip
    raw["plan"]["workdir"] = o["work directory"]
    for info in raw["plan"].get("task_info", {}).values():
        info["description"] = f"reads {quote}"
    for run in raw["runs"]:
        run["error"] = f"failed: {quote}"
        for check in run.get("checks", []):
            check["detail"] = quote
    raw.setdefault("warnings", []).append({"code": "plan", "message": quote})
    for d in raw.get("datasets", {}).values():
        d["origin"] = f"your directory {quote}"
        d.setdefault("spec", {})["description"] = quote
    for c in raw.get("ceilings", []):
        c["argv"] = ["fio", f"--filename={o['device']}", o["work directory"]]
    for p in raw.get("profiles_as_run", {}).values():
        p["notes"] = quote
    return Session.model_validate(raw)


def _texts() -> Iterator[tuple[str, str]]:
    for name in SESSIONS:
        yield name, make(disguised(name), KEY)


@pytest.mark.parametrize("name", SESSIONS)
def test_no_byte_of_any_original_is_in_the_bundle(name: str) -> None:
    text = make(disguised(name), KEY)
    low = text.lower()
    for what, value in ORIGINALS.items():
        assert value.lower() not in low, what
    for piece in (*PIECES, ORIGINALS["user"]):
        assert piece.lower() not in low, piece
    assert not re.search(r'"/', text), "a path-like string"
    assert "/dev/" not in text


@pytest.mark.parametrize("name", SESSIONS)
def test_the_bundle_verifies_and_keeps_every_runs_figures(name: str) -> None:
    session = disguised(name)
    body = verify(json.loads(make(session, KEY)), name)
    assert len(body["runs"]) == len(session.runs) and len(body["warmup"]) == len(session.warmup)
    for run, kept in zip(session.runs, body["runs"], strict=True):
        assert (kept["filesystem"], kept["task"], kept["repetition"], kept["status"]) == (
            run.filesystem, run.task, run.repetition, run.status,
        )  # fmt: skip
        assert kept["values"] == {k: v for k, v in run.values.items() if v == v}  # NaN: null
        if run.measurement is not None:
            m = kept["measurement"]
            assert m["wall_s"] == run.measurement.wall_s
            assert m["device_write_bytes"] == run.measurement.device_write_bytes
            assert len(kept["repeats"]) == len(run.repeats)
            unavailable = run.unavailable
            if "max_rss_kib" in unavailable:  # schema < 3: fsarena's own figure, never shared
                assert m["max_rss_kib"] is None


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))
    else:
        yield path


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if value is None:
        return 0
    return f"{value}x"


@pytest.mark.parametrize("name", ["session-v4.json", "session-v1.json"])
def test_changing_any_one_value_breaks_the_verification(name: str) -> None:
    sealed = json.loads(make(disguised(name), KEY))
    leaves = list(_leaves(sealed["bundle"]))
    assert len(leaves) > 1000
    for path in leaves[:: max(1, len(leaves) // 300)]:
        tampered = copy.deepcopy(sealed)
        owner = tampered["bundle"]
        for step in path[:-1]:
            owner = owner[step]
        owner[path[-1]] = _changed(owner[path[-1]])
        with pytest.raises(FsarenaError, match="does not verify"):
            verify(tampered, "tampered")
    sealed["bundle"]["runs"].pop()  # a run taken away
    with pytest.raises(FsarenaError, match="does not verify"):
        verify(sealed, "shortened")


def test_the_digest_is_of_the_contents_not_of_their_layout() -> None:
    sealed = json.loads(make(load(FIXTURES / "session-v4.json"), KEY))
    relaid = json.loads(json.dumps(sealed, indent=4))  # re-indented, as an editor might
    assert verify(relaid, "relaid") == sealed["bundle"]
    assert sealed["digest"] == seal(sealed["bundle"])["digest"]
    assert canonical({"b": 1, "a": [1.5, None]}) == b'{"a":[1.5,null],"b":1}'


def test_a_bundle_with_nan_is_not_one_fsarena_wrote() -> None:
    sealed = json.loads(make(load(FIXTURES / "session-v4.json"), KEY))
    sealed["bundle"]["runs"][0]["measurement"]["wall_s"] = float("nan")
    with pytest.raises(FsarenaError, match="does not verify"):
        verify(sealed, "nan")


def test_one_salt_one_host_pseudonym_and_another_salt_another() -> None:
    a, b = load(FIXTURES / "session-v4.json"), load(FIXTURES / "session-v3.json")
    b.host.machine_id = a.host.machine_id  # the same host, another session
    first, second = build(a, KEY), build(b, KEY)
    assert first["host"]["id"] == second["host"]["id"]
    assert first["session"]["id"] != second["session"]["id"]
    assert build(a, bytes(32))["host"]["id"] != first["host"]["id"]
    assert a.host.machine_id not in first["host"]["id"]


def test_a_name_that_holds_the_host_name_is_refused() -> None:
    session = disguised("session-v4.json")
    session.plan.suite = f"{ORIGINALS['host name']}-nightly"
    with pytest.raises(FsarenaError, match="this host's name"):
        make(session, KEY)


def test_the_salt_is_made_once_private_and_kept(tmp_path: Path) -> None:
    first = salt(tmp_path / "cfg")
    path = tmp_path / "cfg" / "share-salt"
    assert oct(path.stat().st_mode & 0o777) == "0o600" and len(first) == 32
    assert salt(tmp_path / "cfg") == first
    path.write_text("not hex\n")
    with pytest.raises(FsarenaError, match="not a share salt"):
        salt(tmp_path / "cfg")


# ---------------------------------------------------------------- the command


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return CliRunner()


def test_share_writes_a_bundle_that_verifies_and_never_overwrites(
    runner: CliRunner, tmp_path: Path
) -> None:
    session = tmp_path / "s.json"
    session.write_text(disguised("session-v4.json").model_dump_json())
    out = tmp_path / "s.bundle.json"
    done = runner.invoke(main, ["share", str(session), "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert read(out)["runs"]
    assert (tmp_path / "config" / "fsarena" / "share-salt").exists()
    again = runner.invoke(main, ["share", str(session), "-o", str(out)])
    assert again.exit_code == 2 and "exists already" in again.output
    verified = runner.invoke(main, ["share", "--verify", str(out)])
    assert verified.exit_code == 0 and "verifies" in verified.output
    out.write_text(out.read_text().replace('"status": "ok"', '"status": "failed"', 1))
    broken = runner.invoke(main, ["share", "--verify", str(out)])
    assert broken.exit_code == 2 and "does not verify" in broken.output


def test_a_dry_run_prints_exactly_the_bundle_and_writes_nothing(
    runner: CliRunner, tmp_path: Path
) -> None:
    session = tmp_path / "s.json"
    session.write_text(disguised("session-v4.json").model_dump_json())
    done = runner.invoke(main, ["share", "bundle", str(session), "--dry-run"])
    assert done.exit_code == 0
    assert not (tmp_path / "s.bundle.json").exists()
    printed = done.stdout
    written = runner.invoke(main, ["share", str(session)])
    assert written.exit_code == 0
    assert (tmp_path / "s.bundle.json").read_text() == printed  # the same salt: the same bytes
    assert dumps(json.loads(printed)) == printed


def test_share_without_a_session_is_one_line(runner: CliRunner) -> None:
    done = runner.invoke(main, ["share", "--dry-run"])
    assert done.exit_code == 2 and "give the session file" in done.output
    both = runner.invoke(main, ["share", "x.json", "--verify", "y.json"])
    assert both.exit_code == 2 and "alone" in both.output
    missing = runner.invoke(main, ["share", "--verify", os.devnull + "-none"])
    assert missing.exit_code == 2 and "no bundle at" in missing.output
