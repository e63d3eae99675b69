"""PostgreSQL from its own log: pgreplay's statistics parsed, the log and backup checked, the plan.

The replay itself (a real server, real pgreplay, loop devices) runs in
tests/integration/test_pg_replay.py. The fixtures are pgreplay 1.2.0's real
output: a 500-transaction pgbench -c 1 log parsed (-f) and replayed at -s 1 and
at -s 1000 -j, and the head of a log whose first session is pg_basebackup's.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from fsarena.datasets.pglog import PgLogSpec
from fsarena.errors import FsarenaError
from fsarena.plan import catalog
from fsarena.plan.yours import user_suite
from fsarena.tasks import TASKS
from fsarena.tasks.pg_replay import parse_pgreplay

PGREPLAY = Path(__file__).resolve().parents[1] / "fixtures" / "tools" / "pgreplay"


def test_the_replay_statistics_at_the_logged_pace_are_parsed() -> None:
    v = parse_pgreplay((PGREPLAY / "replay-paced.txt").read_text())
    assert v["statements"] == 3502 and v["failed"] == 0
    assert v["run_s"] == 8.269 and v["lag_s"] == 6 and v["speed"] == 1.0
    assert v["statement_avg_s"] == 0.002 and v["statement_max_s"] == 0.216
    assert v["calls"] == 3506 and v["connections"] == 2


def test_the_fast_replay_and_the_parse_statistics_are_parsed() -> None:
    fast = parse_pgreplay((PGREPLAY / "replay-fast.txt").read_text())
    assert fast["speed"] == 1000.0 and fast["run_s"] == 7.551 and fast["statements"] == 3502
    parsed = parse_pgreplay((PGREPLAY / "parse.txt").read_text())
    assert parsed == {"statements_parsed": 3502}


def test_output_without_statistics_is_an_error_naming_what_pgreplay_said() -> None:
    with pytest.raises(FsarenaError, match=r"no statistics.*Error parsing line 1"):
        parse_pgreplay('Error parsing line 1: no "|" found - log_line_prefix may be wrong\n')


def _backup(tmp_path: Path) -> Path:
    base = tmp_path / "base"
    base.mkdir()
    (base / "PG_VERSION").write_text("15\n")
    return base


def test_the_log_begins_after_its_pg_basebackup_session(tmp_path: Path) -> None:
    spec = PgLogSpec(log=str(PGREPLAY / "statements.log"), base=str(_backup(tmp_path)))
    facts = spec.facts
    # The second replication session (pg_basebackup's WAL stream) ended at 22.649.
    assert facts.begin == "2026-11-27 18:39:22.650"
    assert facts.statements == 10 and not facts.csv
    assert 0 < facts.logged_s < 1
    assert spec.form == "plain"
    assert "10 statements" in spec.description()


def test_a_tar_format_backup_is_recognised(tmp_path: Path) -> None:
    tar = tmp_path / "tar"
    tar.mkdir()
    shutil.make_archive(str(tar / "base"), "tar", root_dir=_backup(tmp_path))
    spec = PgLogSpec(log=str(PGREPLAY / "statements.log"), base=str(tar))
    assert spec.form == "tar-dir"


@pytest.mark.parametrize(
    ("log", "base", "message"),
    [
        ("missing.log", "base", r"no statement log at .*log_statement = 'all'"),
        ("bad.log", "base", "line 1 of .* lacks pgreplay's prefix " + re.escape("'%m|%u|%d|%c|'")),
        ("quiet.log", "base", "holds no statement"),
        ("statements.log", "nowhere", r"does not exist: give the base backup .*pg_basebackup"),
        ("statements.log", "empty", "is not a base backup"),
    ],
)
def test_bad_input_is_one_line_saying_what_to_do(
    tmp_path: Path, log: str, base: str, message: str
) -> None:
    _backup(tmp_path)
    (tmp_path / "empty").mkdir()
    shutil.copy(PGREPLAY / "statements.log", tmp_path / "statements.log")
    (tmp_path / "bad.log").write_text("nolog\n")
    (tmp_path / "quiet.log").write_text(
        "2026-11-27 18:39:20.070 UTC|||6b09ce58.2c3|LOG:  starting PostgreSQL 15.18\n"
    )
    with pytest.raises(FsarenaError, match=message) as caught:
        catalog.customized("pglog", {"kind": "pglog", "log": str(tmp_path / log),
                                     "base": str(tmp_path / base)})  # fmt: skip
    assert "\n" not in str(caught.value)


def test_pg_replay_plans_both_timing_models_beside_the_trace(tmp_path: Path) -> None:
    log, base = str(PGREPLAY / "statements.log"), str(_backup(tmp_path))
    suite = user_suite(None, (), None, None, None, "both", log, base)
    assert not isinstance(suite, str)
    assert suite.tasks == ["pg_replay", "pg_replay_paced"]
    assert suite.datasets["pglog"] == {"kind": "pglog", "log": log, "base": base}
    paced = user_suite("article-a-2006", (), None, None, None, "paced", log, base)
    assert not isinstance(paced, str) and paced.tasks[-2:] == ["pg_replay_paced", "umount"]
    assert TASKS["pg_replay"].kind == "replay_capacity"
    assert TASKS["pg_replay_paced"].kind == "replay_paced"


def test_a_log_without_its_backup_is_refused() -> None:
    with pytest.raises(FsarenaError, match="--pg-base DIR"):
        user_suite(None, (), None, None, None, "both", "/x.log", None)
    with pytest.raises(FsarenaError, match="give the log"):
        user_suite(None, (), None, None, None, "both", None, "/base")


def test_a_suite_without_the_dataset_says_what_to_write() -> None:
    with pytest.raises(FsarenaError, match='kind = "pglog"'):
        catalog.customized("pglog", {})
