"""A tuning sweep as a suite: a filesystem's defaults beside one configuration per option.

`fsarena tune --fs btrfs --suite server-2026` runs the suite on btrfs as it comes and on
btrfs with options of the options table (fsarena.filesystems.options), every
configuration a variant of the suite exactly as a `[filesystems.NAME]` table would make
it. The configurations are then compared like any filesystems of a run: the same rounds,
the same decisive stopping rule (eliminating between rounds) and the same answer, so
"keep the defaults" is one of the answers it can give.

Which options by default: one per setting (an options-table group: the compression
algorithm, copy-on-write, the atime mode ...), among those meant for the kinds of work
the workload weighs (each option's `kinds`), the one meant for most of them. Options of
one group are alternatives of one setting, and each configuration costs a whole
sequence per round: the default sweep asks which settings matter for this workload;
`--options NAME,...` compares alternatives, `--options all` sweeps the whole table.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from fsarena.errors import FsarenaError
from fsarena.filesystems.options import Option, options_for, table, user_option
from fsarena.plan.suite import Suite, Variant, load_suite

ALL = "all"  # `--options all`: every option of the table
# A sweep's budget, in runs of the defaults alone (`fsarena run` of the same suite): what
# the configurations share, counted in sequences (rounds_within) and, as a guard for
# configurations slower than the defaults, in seconds (that many default runs' budgets).
BUDGET_RUNS = 3


@dataclass(frozen=True)
class Sweep:
    suite: Suite
    filesystems: list[str]  # each filesystem's defaults, then its configurations
    left_out: list[str]  # options not swept, each with why
    options: dict[str, Option]  # each configuration's option, by configuration name


def configuration_name(fs: str, option: Option) -> str:
    """A variant's name: the filesystem and the option, in characters a name may hold."""
    signed = option.name.replace(":-", ":minus")  # zstd:-3 is not zstd:3
    return f"{fs}-" + re.sub(r"[^A-Za-z0-9]+", "-", signed).strip("-")


def picked_options(
    filesystems: list[str], picked: list[str] | None, kinds: Collection[str] | None = None
) -> list[tuple[str, Option]]:
    """Each filesystem's options to sweep, in table order: those PICKED (`all`: every one;
    a picked name the table lacks is the user's own mount option, tried on each
    filesystem), or by default one per setting for the workload's KINDS (default_options;
    every option when no kinds are given)."""
    if picked == [ALL]:
        picked = None
    elif picked is None and kinds is not None:
        return [(fs, o) for fs in filesystems for o in default_options(fs, kinds)]
    by_fs = {fs: options_for(fs) for fs in filesystems}
    known = {o.name for options in by_fs.values() for o in options}
    elsewhere = [p for p in picked or [] if p not in known and p in {o.name for o in table()}]
    if elsewhere:  # another filesystem's option: a slip, not an option to try
        raise FsarenaError(
            f"--options: {', '.join(elsewhere)} not in the options table of "
            f"{', '.join(filesystems)}; `fsarena list options --fs {','.join(filesystems)}` "
            "lists them"
        )
    extra = [p for p in picked or [] if p not in known]
    return [
        (fs, o)
        for fs, options in by_fs.items()
        for o in [*options, *(user_option(fs, p) for p in extra)]
        if picked is None or o.name in picked
    ]


def default_options(fs: str, kinds: Collection[str]) -> list[Option]:
    """One option per group: of those meant for some of KINDS, the one meant for most of
    them (the table's order breaks ties), in table order."""
    best: dict[str, tuple[int, int, Option]] = {}
    for i, o in enumerate(options_for(fs)):
        covered = len(set(o.kinds) & set(kinds))
        if covered and (o.group not in best or covered > best[o.group][0]):
            best[o.group] = (covered, i, o)
    return [o for _, _, o in sorted(best.values(), key=lambda found: found[1])]


def rounds_within(runs: float, repetitions: int, filesystems: int, configurations: int) -> int:
    """The rounds of a sweep that fit RUNS runs of the defaults alone, counted in sequences
    (each sequence of the same time): a run of the defaults is a warm-up round and the
    plan's rounds of FILESYSTEMS sequences; the sweep warms up on the defaults too, then
    runs CONFIGURATIONS sequences a round (0: not even one round fits)."""
    held = runs * (1 + repetitions) * filesystems - filesystems
    return max(0, math.floor(held / configurations + 1e-9))


def sweep(
    suite: str | Suite,
    filesystems: list[str],
    picked: list[str] | None,
    refused: Mapping[tuple[str, str], str] | None = None,
    kinds: Collection[str] | None = None,
) -> Sweep:
    """The suite with a variant per option of each filesystem: those PICKED, or one per
    setting for the workload's KINDS (picked_options).

    refused: (filesystem, option) -> why this kernel or mkfs refused it (run.optionprobe):
    left out of the sweep and said, never run and never recommended.
    """
    base = load_suite(suite) if isinstance(suite, str) else suite
    refused = refused or {}
    wanted = picked_options(filesystems, picked, kinds)
    variants: dict[str, Variant] = {}
    names: list[str] = []
    chosen: dict[str, Option] = {}
    left_out: list[str] = []
    for fs in filesystems:
        names.append(fs)
        for o in (o for f, o in wanted if f == fs):
            if (why := refused.get((fs, o.name))) is not None:
                left_out.append(f"{fs} {o.name}: unavailable here: {why}")
                continue
            name = configuration_name(fs, o)
            variants[name] = Variant(
                base=fs,
                mount_options=None if not o.mount else [*_base_mount(fs), *o.mount],
                mkfs_options=list(o.mkfs),
                data_dir_attributes=[o.directory] if o.directory else [],
                notes=f"{o.name}: {o.trades}",
            )
            names.append(name)
            chosen[name] = o
    if len(names) == len(filesystems):
        raise _nothing_to_sweep(filesystems, left_out, kinds if not wanted and not picked else None)
    table_of = {**{fs: Variant() for fs in filesystems}, **variants}
    return Sweep(
        base.model_copy(update={"filesystems": table_of, "name": base.name}),
        names,
        left_out,
        chosen,
    )


def _nothing_to_sweep(
    filesystems: list[str], left_out: list[str], kinds: Collection[str] | None
) -> FsarenaError:
    """Why a sweep has no configuration: no default option for the KINDS, or all refused."""
    if kinds is not None:
        return FsarenaError(
            f"no option of {', '.join(filesystems)} is meant for the kinds of work this "
            f"workload weighs ({', '.join(kinds) or 'none'}): name options with --options "
            "NAME,... or sweep them all with --options all"
        )
    refused = "; " + "; ".join(left_out) if left_out else ""
    return FsarenaError(f"no option to sweep{refused}: pick others with --options")


def _base_mount(fs: str) -> list[str]:
    from fsarena.filesystems.profiles import PROFILES

    return list(PROFILES[fs].mount_options)
