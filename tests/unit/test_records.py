"""The session's typed records: every stored version loads and re-saves unchanged, keys are checked.

Covered by mypy (pyproject's files): the typed accesses below are checked statically.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import math
import os
import signal
import subprocess
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from fsarena.session.file import CeilingSample, Session, load, save
from fsarena.session.records import HostFacts, PlanRecord, Record, TaskInfo, TimingRecord

FIXTURES = Path(__file__).parent.parent / "fixtures"
SESSIONS = [
    "session-v1.json",
    "session-v2.json",
    "session-v3.json",
    "session-v4.json",
    "three-filesystems.json",
]
RECORDS = (
    "host",
    "plan",
    "profiles_as_run",
    "datasets",
    "source",
    "target",
    "machine",
    "timing",
    "aging",
    "comparison",
)
SRC = Path(__file__).parent.parent.parent / "src" / "fsarena"


def _raw(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return data


@pytest.mark.parametrize("name", SESSIONS)
def test_each_version_keeps_its_records_as_stored(name: str) -> None:
    """Loaded and dumped, every record is the file's, key for key: none added, none lost."""
    raw = _raw(name)
    dumped = load(FIXTURES / name).model_dump(mode="json")
    for field in RECORDS:
        if field in raw:
            assert dumped[field] == raw[field], field
        else:  # a version without the field: it is written empty, as before
            assert dumped[field] == {}, field


@pytest.mark.parametrize("name", SESSIONS)
def test_a_session_saved_and_loaded_again_is_the_same_json(name: str, tmp_path: Path) -> None:
    save(load(FIXTURES / name), tmp_path / "once.json")
    save(load(tmp_path / "once.json"), tmp_path / "twice.json")
    assert (tmp_path / "twice.json").read_text() == (tmp_path / "once.json").read_text()


@pytest.mark.parametrize("name", [*SESSIONS, "full-v2.json"])
def test_the_saved_file_holds_what_the_session_dumps(name: str, tmp_path: Path) -> None:
    """save() uses pydantic's encoder (fast): its file must hold the dictionary reports read."""
    session = load(FIXTURES / name)
    save(session, tmp_path / "s.json")
    assert json.loads((tmp_path / "s.json").read_text()) == session.model_dump(mode="json")


def test_infinity_and_nan_survive_a_save(tmp_path: Path) -> None:
    """As json.dumps wrote them (Infinity, NaN), in every kind of model: never null."""
    session = load(FIXTURES / "full-v2.json")
    index, run = next((i, r) for i, r in enumerate(session.runs) if r.measurement)
    assert run.measurement is not None
    run.values["probe"] = math.inf
    run.measurement = dataclasses.replace(
        run.measurement, wall_s=math.inf, extra={"capacity_pct": math.nan}
    )
    session.host.__pydantic_extra__ = {"unknown": -math.inf}  # a key a newer fsarena wrote
    session.ceilings.append(
        CeilingSample(
            repetition=1, direction="read", bytes_per_s=math.inf, size_bytes=1, argv=["fio"]
        )
    )
    save(session, tmp_path / "s.json")
    again = load(tmp_path / "s.json")
    saved = again.runs[index]
    assert saved.values["probe"] == math.inf
    assert saved.measurement is not None and saved.measurement.wall_s == math.inf
    assert math.isnan(saved.measurement.extra["capacity_pct"])
    assert again.host.model_extra == {"unknown": -math.inf}
    assert again.ceilings[-1].bytes_per_s == math.inf


def test_the_fixtures_cover_every_stored_version() -> None:
    assert {_raw(n)["schema_version"] for n in SESSIONS} == {1, 2, 3, 4}


def test_unknown_keys_are_kept_on_a_re_save(tmp_path: Path) -> None:
    """A key a newer fsarena wrote (or no reader needs) survives a load and a save."""
    raw = _raw("session-v2.json")
    raw["host"]["numa_nodes"] = 2
    raw["host"]["workdir_backing"]["rotational"] = False
    task = next(iter(raw["plan"]["task_info"]))
    raw["plan"]["task_info"][task]["weight"] = 0.5
    name = next(iter(raw["profiles_as_run"]))
    raw["profiles_as_run"][name]["journal"] = {"mode": "ordered"}
    (tmp_path / "in.json").write_text(json.dumps(raw))
    save(load(tmp_path / "in.json"), tmp_path / "out.json")
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["host"]["numa_nodes"] == 2
    assert out["host"]["workdir_backing"]["rotational"] is False
    assert out["plan"]["task_info"][task]["weight"] == 0.5
    assert out["profiles_as_run"][name]["journal"] == {"mode": "ordered"}
    # Kept, but not typed: a reader must name a typed field.
    assert load(tmp_path / "out.json").host.model_extra == {"numa_nodes": 2}


def test_a_record_writes_only_the_keys_it_was_given() -> None:
    assert HostFacts(kernel="6.1").model_dump(mode="json") == {"kernel": "6.1"}
    assert TaskInfo().model_dump() == {}
    assert TaskInfo(timed=True).model_dump() == {"timed": True}  # given, even if the default
    timing = TimingRecord()
    timing.setup_s = 1.5  # assigned: written
    assert timing.model_dump() == {"setup_s": 1.5}


def test_numbers_stored_as_integers_stay_integers() -> None:
    """A float field would write 1 back as 1.0: the file and the reports would change."""
    plan = PlanRecord.model_validate({"scale": 1, "task_timeout_s": 3600})
    assert json.dumps(plan.model_dump(mode="json"), sort_keys=True) == (
        '{"scale": 1, "task_timeout_s": 3600}'
    )


def test_an_empty_record_is_false_as_the_empty_dictionary_was() -> None:
    session = load(FIXTURES / "session-v3.json")  # stores "machine": {} and "target": {}
    assert not session.machine and not session.target
    assert session.host and session.plan


def test_a_misspelt_key_is_an_error_not_a_default() -> None:
    """A renamed field read by its old name raises (mypy reports it too), never a default."""
    session = load(FIXTURES / "session-v1.json")
    host: Any = session.host  # Any: mypy would reject the misspelt name below
    with pytest.raises(AttributeError):
        _ = host.cpu_modle
    # The typed reads, checked by mypy (this file is in its files).
    cores: int = session.host.cpus
    memory: int = session.host.mem_total_bytes
    timed: bool = session.plan.info(session.tasks()[0]).timed
    assert cores > 0 and memory > 0 and timed in (True, False)


def test_a_value_of_the_wrong_type_is_refused(tmp_path: Path) -> None:
    raw = _raw("session-v1.json")
    raw["host"]["cpus"] = "two"
    (tmp_path / "bad.json").write_text(json.dumps(raw))
    with pytest.raises(Exception, match=r"damaged: host\.cpus"):
        load(tmp_path / "bad.json")


RECORD_FIELDS = {"host", "plan", "source", "target", "machine", "timing", "task_info"}
KEYED_RECORDS = {"profiles_as_run", "datasets", "aging"}


def _record_gets(tree: ast.AST) -> list[int]:
    """Lines reading a session record with .get("key"): the reads typed records replace."""
    found = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            continue
        owner = node.func.value
        # session.host.get("kernel"), profiles_as_run["x"].get("driver"),
        # session.profiles_as_run.get(fs, {}).get("group")
        direct = isinstance(owner, ast.Attribute) and owner.attr in RECORD_FIELDS
        nested = isinstance(owner, ast.Subscript | ast.Call) and any(
            isinstance(n, ast.Attribute) and n.attr in KEYED_RECORDS | RECORD_FIELDS
            for n in ast.walk(owner)
        )
        if direct or nested:
            found.append(node.lineno)
    return found


def test_no_session_record_is_read_with_get_and_a_default() -> None:
    """A read like session.host.get("kernel", "?") hides a renamed key behind its default."""
    offenders = [
        f"{path.relative_to(SRC)}:{line}"
        for path in sorted(SRC.rglob("*.py"))
        for line in _record_gets(ast.parse(path.read_text()))
    ]
    assert offenders == []


def test_the_scan_finds_a_get_read() -> None:
    """The scan above can fail: it finds each form of record read by .get."""
    code = textwrap.dedent(
        """
        a = session.host.get("kernel", "?")
        b = session.profiles_as_run.get(fs, {}).get("group", "kernel")
        c = s.plan.get("task_info", {})
        d = session.datasets[name].get("origin")
        ok = session.runs[0].measurement.extra.get("payload_bytes")
        """
    )
    assert _record_gets(ast.parse(code)) == [2, 3, 4, 5]


def test_every_record_is_a_record() -> None:
    """Each inner record of Session is typed by a model, none a dictionary of Any."""
    for field in RECORDS:
        annotation = str(Session.model_fields[field].annotation)
        assert "Any" not in annotation, field
    assert issubclass(HostFacts, Record)


def test_a_ctrl_c_during_a_save_is_an_interrupt_and_leaves_a_whole_file(tmp_path: Path) -> None:
    """A signal landing inside the encoder came out as a PydanticSerializationError.

    The encoder calls back into Python (each record's serializer): without the
    handlers held, most SIGINTs sent during a save of this size surfaced as the
    wrong exception, so the run was reported failed instead of interrupted; held
    during the encoding alone, one landing just after mkstemp left the temporary
    file (2 runs of this test in 12). A signal mask instead of swapped handlers
    failed with another thread alive: that thread took the signal and Python ran
    the handler in the main thread anyway, inside the encoder.
    """
    session = load(FIXTURES / "full-v2.json")
    model = list(session.runs)
    for _ in range(10):
        session.runs.extend(r.model_copy(deep=True) for r in model)
    path = tmp_path / "s.json"
    save(session, path)
    whole = path.read_text()

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    raised: list[type[BaseException]] = []
    previous = signal.signal(signal.SIGINT, interrupt)
    alive = threading.Event()  # another thread, as a run has while a command is timed
    other = threading.Thread(target=alive.wait, daemon=True)
    other.start()
    try:
        for i in range(30):
            # From another process, as a Ctrl-C comes: a thread of this one would take
            # the signal itself while the saving thread holds it.
            delay = f"{0.05 + 0.002 * i:.3f}"
            kill = f"sleep {delay}; kill -INT {os.getpid()}"
            killer = subprocess.Popen(["sh", "-c", kill])
            try:
                for _ in range(20):
                    save(session, path)
                time.sleep(1)  # a signal sent after the saves lands here
            except BaseException as exc:  # which exception is the point
                raised.append(type(exc))
            killer.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
        alive.set()
        other.join()
    assert raised and set(raised) == {KeyboardInterrupt}
    assert path.read_text() == whole
    assert not [p for p in tmp_path.iterdir() if p != path]  # no temporary file left
