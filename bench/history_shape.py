"""What real commits touch: files per commit, lines per changed file, how spread they are.

Run on any git repository (`python bench/history_shape.py REPO [--since REV]`):
from `git log --no-merges --numstat --summary` of HEAD's history it prints,
as JSON, the quantiles fsarena's shaped synthetic history draws from
(fsarena.datasets.history.REAL_SHAPE):

- files touched per commit;
- of the files touched, the share added, deleted and modified;
- lines added and deleted per modified text file;
- the share of a commit's files in its most-touched directory (the spread).

The figures in REAL_SHAPE were measured with it on e2fsprogs
(github.com/tytso/e2fsprogs, 7,581 commits, 1997-04-26 to 2026-03-12, head
a9f482e5), a C filesystem project with kernel-style patches: `python
bench/history_shape.py REPO --exclude e2fsprogs_1.45.7.orig.tar.gz.asc --exclude
tests/f_bad_local_jnl/image --exclude tests/f_badjour_indblks/image` (three blobs
the stored snapshot lacks; binary files count as touched, with no line counts).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from collections import Counter
from statistics import quantiles

QUANTILES = 20  # 5 % steps


Commit = dict[str, list[tuple[int, int, str]] | set[str]]


def commits(repo: str, since: str | None, exclude: list[str]) -> list[Commit]:
    rng = f"{since}..HEAD" if since else "HEAD"
    out = subprocess.run(
        ["git", "-C", repo, "log", "--no-merges", "--no-renames", "--format=@%H",
         "--numstat", "--summary", rng, "--", ".", *(f":(exclude){p}" for p in exclude)],
        capture_output=True, text=True, check=True, errors="replace",
    ).stdout  # fmt: skip
    found: list[Commit] = []
    for line in out.splitlines():
        if line.startswith("@"):
            found.append({"numstat": [], "created": set(), "deleted": set()})
        elif "\t" in line and found:
            add, rem, path = line.split("\t", 2)
            numstat = found[-1]["numstat"]
            assert isinstance(numstat, list)
            numstat.append((int(add) if add != "-" else -1, int(rem) if rem != "-" else -1, path))
        elif line.startswith((" create mode", " delete mode")) and found:
            path = line.split(" ", 4)[4]
            key = "created" if line.startswith(" create") else "deleted"
            bucket = found[-1][key]
            assert isinstance(bucket, set)
            bucket.add(path)
    return [c for c in found if c["numstat"]]


def shape(history: list[Commit]) -> dict[str, object]:
    touched, added_lines, deleted_lines, spread = [], [], [], []
    kinds: Counter[str] = Counter()
    for c in history:
        numstat = c["numstat"]
        created, deleted = c["created"], c["deleted"]
        assert isinstance(numstat, list) and isinstance(created, set) and isinstance(deleted, set)
        touched.append(len(numstat))
        dirs = Counter(os.path.dirname(p) for _, _, p in numstat)
        spread.append(dirs.most_common(1)[0][1] / len(numstat))
        for add, rem, path in numstat:
            kind = "added" if path in created else "deleted" if path in deleted else "modified"
            kinds[kind] += 1
            if kind == "modified" and add >= 0:
                added_lines.append(add)
                deleted_lines.append(rem)
    total = sum(kinds.values())

    def q(values: list[int] | list[float]) -> list[float]:
        """min, the 5 %..95 % quantiles, the 99th percentile, max."""
        fine = quantiles(values, n=100, method="inclusive")
        coarse = quantiles(values, n=QUANTILES, method="inclusive")
        return [round(x, 3) for x in (min(values), *coarse, fine[98], max(values))]

    return {
        "commits": len(history),
        "files_touched_quantiles": q(touched),
        "files_touched_mean": round(sum(touched) / len(touched), 2),
        "share": {k: round(v / total, 4) for k, v in sorted(kinds.items())},
        "lines_added_quantiles": q(added_lines),
        "lines_deleted_quantiles": q(deleted_lines),
        "same_directory_share_quantiles": q(spread),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("--since", default=None, help="only commits after this revision")
    parser.add_argument(
        "--exclude", action="append", default=[],
        help="a path left out (e.g. a blob a partial clone lacks); repeatable",
    )  # fmt: skip
    args = parser.parse_args()
    print(json.dumps(shape(commits(args.repo, args.since, args.exclude)), indent=1))


if __name__ == "__main__":
    main()
