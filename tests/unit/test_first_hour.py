"""What a new user types in the first hour: every problem at once, named as typed, one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fsarena.cli.commands import main
from fsarena.plan.floors import require_proportional, smallest_scale
from fsarena.plan.model import make_plan
from fsarena.plan.suite import load_suite


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), prog_name="fsarena")


def _error(result: Result) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fsarena: error: "), lines
    assert "Usage:" not in result.stderr and "Traceback" not in result.stderr
    return lines[0].removeprefix("fsarena: error: ")


def _dry(tmp_path: Path, *args: str) -> Result:
    work = str(tmp_path / "work")
    return _cli("run", "--dry-run", "--workdir", work, "--results-dir", str(tmp_path), *args)


# ---------------------------------------------------------------- item 6: suite files


def test_a_suite_file_shows_every_problem_at_once(tmp_path: Path) -> None:
    suite = tmp_path / "mine.toml"
    suite.write_text('name = "mine"\nrepetitonss = 2\nscale = -1\n')
    line = _error(_dry(tmp_path, "--suite", str(suite)))
    assert line.startswith(f"{suite} has 3 problems: (1) tasks: missing; add tasks = [")
    assert "(2) scale: must be greater than 0 (it is -1)" in line
    assert "(3) repetitonss: unknown key (misspelled?); did you mean 'repetitions'?" in line
    assert "filesystems" not in line


def test_a_suite_without_filesystems_takes_fs_or_the_default_set(tmp_path: Path) -> None:
    suite = tmp_path / "mine.toml"
    suite.write_text('name = "mine"\ntasks = ["mkfs", "mount", "umount"]\n')
    assert make_plan(str(suite), ["xfs"], 1, 1, 1, "/w").filesystems == ["xfs"]
    default = load_suite("article-a-2006").filesystem_names
    assert make_plan(str(suite), None, 1, 1, 1, "/w").filesystems == default
    assert _dry(tmp_path, "--suite", str(suite), "--fs", "ext4").exit_code == 0


# ---------------------------------------------------------------- item 7: flags as typed


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--scale", "0"), "--scale 0: must be greater than 0"),
        (("--task-timeout", "-1"), "--task-timeout -1: must be greater than 0"),
        (("--repetitions", "0"), "--repetitions 0: must be greater than or equal to 1"),
        (("--target-ci", "0"), "--target-ci 0: must be greater than 0"),
    ],
)
def test_option_errors_name_the_flag_typed(
    tmp_path: Path, args: tuple[str, ...], expected: str
) -> None:
    assert _error(_dry(tmp_path, *args)) == expected


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ("--scale", "abc"),
            "invalid value for '--scale': 'abc' is not a number; write it like 0.02 or 3600; "
            "`fsarena run -h` lists the options",
        ),
        (("--scal", "1"), "no such option '--scal'"),
        (("-n", "x"), "invalid value for '--repetitions' / '-n': 'x' is not a valid integer"),
    ],
)
def test_click_usage_errors_are_one_line_too(
    tmp_path: Path, args: tuple[str, ...], expected: str
) -> None:
    assert _error(_dry(tmp_path, *args)).startswith(expected)


def test_a_usage_error_of_the_group_is_one_line() -> None:
    assert _error(_cli("--bogus")) == "no such option '--bogus'; `fsarena -h` lists the options"
    assert "no such command 'rn'" in _error(_cli("rn"))


@pytest.mark.parametrize(
    "command",
    ["", "run", "report", "compare", "check", "list", "cleanup", "powerloss", "crashtest"],
)
def test_dash_h_is_help_on_every_command(command: str) -> None:
    args = [command, "-h"] if command else ["-h"]
    result = _cli(*args)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Usage: fsarena")
    assert result.output == _cli(*args[:-1], "--help").output


def test_the_old_name_crashtest_runs_the_powerloss_command_hidden() -> None:
    """Issue 27: one word for power loss; a script typing the old name still works."""
    assert _error(_cli("crashtest", "--fs", "nosuchfs")) == _error(
        _cli("powerloss", "--fs", "nosuchfs")
    )
    assert "Old name of `fsarena powerloss`" in _cli("crashtest", "-h").output
    listed = _cli("-h").output
    assert "  powerloss  " in listed and "crashtest" not in listed


def test_run_help_documents_the_exit_codes() -> None:
    out = _cli("run", "-h").output
    assert "3 nothing measured" in out and "1 only part measured" in out


# ---------------------------------------------------------------- item 8: nonsense refused


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ("--fs", ""),
            "--fs '' names no filesystem: give a comma-separated list like ext4,xfs, "
            "or leave --fs out for the suite's own",
        ),
        (("--fs", "ext4,,xfs"), "--fs 'ext4,,xfs' has an empty name: write it like ext4,xfs"),
        (
            ("--fs", "ext4,xfs,ext4"),
            "--fs names ext4 more than once: name each filesystem once "
            "(more runs of it: --repetitions)",
        ),
        (("--scale", "nan"), "invalid value for '--scale': 'nan' is not a finite number"),
        (("--scale", "inf"), "invalid value for '--scale': 'inf' is not a finite number"),
        (("--task-timeout", "nan"), "invalid value for '--task-timeout': 'nan' is not a finite"),
        (
            ("--scale", "1e-9"),
            "--scale 1e-09 is too small: some datasets would stay at their floor, more than "
            "twice their share (iso: 1.0 MB, tree: 0.1 MB); the smallest scale for this suite "
            "is 0.00072",
        ),
    ],
)
def test_nonsense_is_refused_with_the_reason(
    tmp_path: Path, args: tuple[str, ...], expected: str
) -> None:
    assert _error(_dry(tmp_path, *args)).startswith(expected)
    assert not (tmp_path / "work").exists()


def test_check_refuses_the_same_nonsense(tmp_path: Path) -> None:
    assert _error(_cli("check", "--fs", "")).startswith("--fs '' names no filesystem")
    assert "not a finite number" in _error(_cli("check", "--scale", "nan"))


def test_the_smallest_scale_named_is_usable() -> None:
    for suite in ("article-a-2006", "quick"):
        plan = make_plan(suite, ["ext4"], 1, 1e-6, 1, "/w")
        smallest = smallest_scale(plan)
        make_plan(suite, ["ext4"], 1, smallest, 1, "/w")  # accepted
        require_proportional(make_plan(suite, ["ext4"], 1, smallest, 1, "/w"))
        with pytest.raises(Exception, match="too small"):
            require_proportional(make_plan(suite, ["ext4"], 1, smallest / 2, 1, "/w"))


def test_bare_fsarena_still_prints_the_help() -> None:
    result = _cli()
    assert result.output.startswith("Usage: fsarena") and "Commands:" in result.output


def test_server_workloads_take_a_tiny_scale_and_are_flagged_instead() -> None:
    """Their parameters have floors by design (scale factor 1, 5 s): not a refusal."""
    plan = make_plan("server-2026", ["ext4"], 1, 0.01, 1, "/w")
    require_proportional(plan)  # accepted; the run flags a working set that fits in memory
    with pytest.raises(Exception, match="too small"):
        require_proportional(make_plan("article-a-2006", ["ext4"], 1, 1e-5, 1, "/w"))


def test_fixed_datasets_are_not_held_to_the_floors() -> None:
    """workstation-2026's packages are a handful of real .debs at any scale: no refusal."""
    require_proportional(make_plan("workstation-2026", ["ext4"], 1, 0.01, 1, "/w"))


# ---------------------------------------------------------------- issue 36, case 7


def _dry_run(*args: str) -> Result:
    return CliRunner().invoke(
        main, ["run", "--dry-run", "--fs", "ext4", "--scale", "0.01", *args,
               "--workdir", "/var/tmp/fsarena-unit-never-made"],
    )  # fmt: skip


def test_weighing_only_kinds_the_plan_never_measures_is_refused() -> None:
    """Issue 36: `--weigh databases=1` on article A's suite was accepted, then the answer
    said "no kind of work is weighed"."""
    result = _dry_run("--weigh", "databases=1")
    assert result.exit_code == 2, result.output
    assert "--weigh databases: the plan measures no such work" in result.output
    assert "large_files" in result.output  # what it does measure


def test_a_kind_weighed_twice_is_refused() -> None:
    """Issue 36: a kind given twice kept the last silently."""
    result = _dry_run("--weigh", "large_files=1,large_files=3")
    assert result.exit_code == 2, result.output
    assert "--weigh names large_files twice" in result.output


def test_tune_options_errors_name_options_not_fs() -> None:
    """Issue 36: `tune --options` errors named --fs."""
    result = CliRunner().invoke(
        main, ["tune", "--dry-run", "--fs", "ext4", "--options", "noatime,,lazytime",
               "--workdir", "/var/tmp/fsarena-unit-never-made"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "--options 'noatime,,lazytime' has an empty name" in result.output
    assert "--fs" not in result.output
