"""A tuning sweep as a suite: a filesystem's defaults beside one configuration per option.

`fsarena tune --fs btrfs --suite server-2026` runs the suite on btrfs as it comes and on
btrfs with each option of the options table (fsarena.filesystems.options), every
configuration a variant of the suite exactly as a `[filesystems.NAME]` table would make
it. The configurations then race like any filesystems of a run: the same rounds, the
same decisive stopping rule and the same answer, so "the defaults are as good as
anything here" is one of the answers it can give.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from fsarena.errors import FsarenaError
from fsarena.filesystems.options import Option, options_for, table, user_option
from fsarena.plan.suite import Suite, Variant, load_suite


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


def picked_options(filesystems: list[str], picked: list[str] | None) -> list[tuple[str, Option]]:
    """Each filesystem's options to sweep, in table order: all of them, or those PICKED; a
    picked name the table lacks is the user's own mount option, tried on each filesystem."""
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


def sweep(
    suite: str | Suite,
    filesystems: list[str],
    picked: list[str] | None,
    refused: Mapping[tuple[str, str], str] | None = None,
) -> Sweep:
    """The suite with a variant per option of each filesystem; PICKED limits the options.

    refused: (filesystem, option) -> why this kernel or mkfs refused it (run.optionprobe):
    left out of the sweep and said, never run and never recommended.
    """
    base = load_suite(suite) if isinstance(suite, str) else suite
    refused = refused or {}
    wanted = picked_options(filesystems, picked)
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
        raise FsarenaError(
            "no option to sweep"
            + ("; " + "; ".join(left_out) if left_out else "")
            + ": pick others with --options"
        )
    table_of = {**{fs: Variant() for fs in filesystems}, **variants}
    return Sweep(
        base.model_copy(update={"filesystems": table_of, "name": base.name}),
        names,
        left_out,
        chosen,
    )


def _base_mount(fs: str) -> list[str]:
    from fsarena.filesystems.profiles import PROFILES

    return list(PROFILES[fs].mount_options)
