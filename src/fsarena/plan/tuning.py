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
from dataclasses import dataclass

from fsarena.errors import FsarenaError
from fsarena.filesystems.options import Option, options_for
from fsarena.plan.suite import Suite, Variant, load_suite


@dataclass(frozen=True)
class Sweep:
    suite: Suite
    filesystems: list[str]  # each filesystem's defaults, then its configurations
    left_out: list[str]  # options not swept, each with why


def configuration_name(fs: str, option: Option) -> str:
    """A variant's name: the filesystem and the option, in characters a name may hold."""
    signed = option.name.replace(":-", ":minus")  # zstd:-3 is not zstd:3
    return f"{fs}-" + re.sub(r"[^A-Za-z0-9]+", "-", signed).strip("-")


def sweep(suite: str | Suite, filesystems: list[str], picked: list[str] | None) -> Sweep:
    """The suite with a variant per option of each filesystem; PICKED limits the options."""
    base = load_suite(suite) if isinstance(suite, str) else suite
    table = {fs: options_for(fs) for fs in filesystems}
    known = {o.name for options in table.values() for o in options}
    unknown = [p for p in picked or [] if p not in known]
    if unknown:
        raise FsarenaError(
            f"--options: {', '.join(unknown)} not in the options table of "
            f"{', '.join(filesystems)}; `fsarena list options --fs {','.join(filesystems)}` "
            "lists them"
        )
    variants: dict[str, Variant] = {}
    names: list[str] = []
    left_out: list[str] = []
    for fs, options in table.items():
        names.append(fs)
        for o in options:
            if picked is not None and o.name not in picked:
                continue
            if not o.mount and not o.mkfs:
                left_out.append(f"{fs} {o.name}: a per-directory setting, not swept yet")
                continue
            name = configuration_name(fs, o)
            variants[name] = Variant(
                base=fs,
                mount_options=None if not o.mount else [*_base_mount(fs), *o.mount],
                mkfs_options=list(o.mkfs),
                notes=f"{o.name}: {o.trades}",
            )
            names.append(name)
    if len(names) == len(filesystems):
        raise FsarenaError("no option to sweep: pick some with --options, or drop it")
    table_of = {**{fs: Variant() for fs in filesystems}, **variants}
    return Sweep(
        base.model_copy(update={"filesystems": table_of, "name": base.name}), names, left_out
    )


def _base_mount(fs: str) -> list[str]:
    from fsarena.filesystems.profiles import PROFILES

    return list(PROFILES[fs].mount_options)
