"""Today's results beside the seed articles' published figures, with the rank agreement.

The figures are data (reference/articles.json, a copy of the project's shared
reference, and reference/article_map.toml, which says which fsarena task and
metric each figure is). They come from other hardware and kernels, 2001 to
2009: only rankings mean something across that gap, so each comparison
carries Spearman's rank correlation over the filesystems both have, when
there are at least three. `blocks(session)` is the report's section of them.
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from scipy import stats as scipy_stats

from fsarena.analysis.scope import KERNEL, group_of
from fsarena.analysis.stats import summarize
from fsarena.measure.metrics import METRICS
from fsarena.report.comparison import fmt, run_value
from fsarena.report.document import Block, Heading, Notes, Paragraph, Section, Table
from fsarena.session.file import Session

MIN_COMMON = 3
CAVEAT = (
    "published figures from other hardware and kernels (2001-2009): compare rankings, never values"
)
GAP_METRIC = "theory_vs_practice_gap_mb_s"


@dataclass(frozen=True)
class ArticleComparison:
    """One published figure set beside today's means, per filesystem."""

    article: str  # the article's title
    task: str
    metric: str
    label: str  # what the number is, with its unit
    cells: tuple[tuple[str, float | None, float | None], ...]  # (filesystem, article, today)
    spearman: float | None  # rank agreement over the filesystems in common
    common: int  # filesystems with both figures


@cache
def _reference() -> tuple[dict[str, Any], dict[str, Any]]:
    folder = resources.files("fsarena.report.reference")
    figures = json.loads(folder.joinpath("articles.json").read_text())
    mapping = tomllib.loads(folder.joinpath("article_map.toml").read_text())
    return figures, mapping


def _published(
    figures: dict[str, Any], spec: dict[str, Any], aliases: dict[str, str]
) -> dict[str, float]:
    node: Any = figures[spec["article"]]
    for key in spec["path"]:
        node = node[key]
    out = {}
    for fs, value in node.items():
        if "field" in spec:
            value = value[spec["field"]]
        elif "index" in spec:
            value = value[spec["index"]]
        out[aliases.get(fs, fs)] = float(value)
    return out


def _today(session: Session, task: str, metric: str) -> dict[str, float]:
    """Mean of the metric's raw values per filesystem, in the metric's display unit."""
    m = METRICS[metric]
    out = {}
    for fs, name in _comparable(session, task).items():
        values = [
            v
            for r in session.runs
            if r.task == task and r.filesystem == fs and r.status == "ok"
            if (v := run_value(r, metric)) is not None
        ]
        if values:
            out[name] = summarize(values, m.mean).mean * m.scale
    return out


def _comparable(session: Session, task: str) -> dict[str, str]:
    """The filesystems whose figures may stand beside the articles', and under which name.

    Times through a guest kernel include its emulator, and FUSE times are another
    program's: only the host kernel's stand beside the published ones (absolute times
    of the same code). What a probe (space) measures depends on the on-disk format
    alone, so there every driver counts, under the filesystem's own name (NAME for
    NAME@uml) unless taken.
    """
    names = {fs: fs for fs in session.filesystems() if group_of(session, fs) == KERNEL}
    if any(r.measurement is not None for r in session.runs if r.task == task):
        return names
    for fs in session.filesystems():
        base = session.profile(fs).base or fs
        if fs not in names and base not in names.values():
            names[fs] = base
    return names


def left_out(session: Session) -> str:
    """What the comparison leaves out, in words ("" when every filesystem is in it)."""
    if all(group_of(session, fs) == KERNEL for fs in session.filesystems()):
        return ""
    return (
        "times of host kernel drivers only: guest and FUSE times are not comparable with "
        "published ones; space figures of every driver, under the filesystem's name"
    )


def _gap(session: Session) -> dict[str, float]:
    """Article C's theory vs practice: bonnie++ block write minus the ISO copies' MB/s."""
    bonnie = _today(session, "bonnie", "bonnie_seq_write_mb_s")
    there = _today(session, "bigiso_copy_there", "throughput_bytes_per_s")
    back = _today(session, "bigiso_copy_back", "throughput_bytes_per_s")
    out = {}
    for fs, theory in bonnie.items():
        practice = [v for v in (there.get(fs), back.get(fs)) if v is not None]
        if practice:
            out[fs] = theory - sum(practice) / len(practice)
    return out


def _on_user_data(session: Session) -> set[str]:
    """Tasks that ran on the user's own directory: the articles' figures are of other data."""
    yours = {
        name
        for name, d in session.datasets.items()
        if (d.origin or "").startswith("your directory")
    }
    return {t for t, i in session.plan.task_info.items() if yours & set(i.datasets)}


def spearman(pairs: list[tuple[float, float]]) -> float | None:
    """Spearman's rho of the pairs (ties get mean ranks), None below three or if undefined."""
    if len(pairs) < MIN_COMMON or len({a for a, _ in pairs}) < 2 or len({b for _, b in pairs}) < 2:
        return None
    rho = float(scipy_stats.spearmanr([a for a, _ in pairs], [b for _, b in pairs]).statistic)
    return None if math.isnan(rho) else rho


# Built-in suites of today's workloads: their reports never stand beside the 2001-2009
# figures (a server suite that also runs mkfs is not "against the articles"). Article
# suites and a user's suite file are compared where their tasks match, as before.
OWN_WORKLOADS = ("server-2026", "workstation-2026", "powerloss")


def comparisons(session: Session) -> list[ArticleComparison]:
    """One row set per published figure whose task this session ran (article suites only)."""
    if session.plan.suite in OWN_WORKLOADS:
        return []
    figures, mapping = _reference()
    aliases = mapping.get("filesystems", {})
    tasks = set(session.tasks()) - _on_user_data(session)
    rows = []
    for spec in mapping["figures"]:
        metric = spec["metric"]
        if metric == GAP_METRIC:
            if not {"bonnie", "bigiso_copy_there"} <= tasks:
                continue
            today, label = _gap(session), "bonnie++ block write − ISO copy, MB/s"
        else:
            if spec["task"] not in tasks:
                continue
            today = _today(session, spec["task"], metric)
            m = METRICS[metric]
            label = f"{m.label} {m.unit}".strip()
        if not today:  # measured on no filesystem: a column of dashes says nothing
            continue
        published = _published(figures, spec, aliases)
        names = [*published, *sorted(set(today) - set(published))]
        cells = tuple((fs, published.get(fs), today.get(fs)) for fs in names)
        pairs = [(a, b) for _, a, b in cells if a is not None and b is not None]
        rows.append(
            ArticleComparison(
                article=mapping["articles"][spec["article"]],
                task=spec["task"],
                metric=metric,
                label=label,
                cells=cells,
                spearman=spearman(pairs),
                common=len(pairs),
            )
        )
    return rows


def agreement(row: ArticleComparison) -> str:
    """The rank agreement of a row, or why it was not computed."""
    if row.spearman is None:
        return f"rank agreement: not computed ({row.common} filesystems in common, need 3)"
    return f"rank agreement (Spearman): {row.spearman:+.2f} over {row.common} filesystems"


def cell(value: float | None) -> str:
    return "-" if value is None else fmt(value)


HEADERS = ["figure", "article, best first", "today, best first", "rank agreement"]


def _ranked(row: ArticleComparison, column: int) -> str:
    """'xfs 0.7, jfs 1.3, ext3 14.7': one side's figures, best first (as published: values
    from other hardware and decades are for the order, not to be compared with today's)."""
    metric = METRICS.get(row.metric)
    found = [(fs, value) for fs, *v in row.cells if (value := v[column]) is not None]
    if metric is not None:
        found.sort(key=lambda c: -c[1] if metric.better == "higher" else c[1])
    return ", ".join(f"{fs} {cell(v)}" for fs, v in found) or "-"


def _short_agreement(row: ArticleComparison) -> str:
    if row.spearman is None:
        return f"n/a ({row.common} in common, need {MIN_COMMON})"
    return f"{row.spearman:+.2f} over {row.common}"


def table(session: Session) -> list[list[str]]:
    """Every published figure beside today's, one row each: the one "against the articles" table."""
    return [
        [
            f"{row.task}: {row.label} ({row.article.partition(':')[0]})",
            _ranked(row, 0),
            _ranked(row, 1),
            _short_agreement(row),
        ]
        for row in comparisons(session)
    ]


def _articles(session: Session) -> list[str]:
    """The articles cited, by letter: 'A: Linux filesystems compared (2006)'."""
    return sorted({row.article for row in comparisons(session)})


def blocks(session: Session) -> list[Block]:
    """The "against the articles" section: the caveat, the articles cited, one row a figure."""
    rows = table(session)
    if not rows:
        return []
    notes: list[Block] = [Paragraph(_sentence(CAVEAT), style="aside")]
    if note := left_out(session):
        notes.append(Paragraph(_sentence(note), style="aside"))
    cited = Notes(tuple(_articles(session)))
    figures = Table(tuple(HEADERS), tuple(tuple(r) for r in rows), style="text")
    heading = Heading("Against the articles", anchor="articles")
    return [Section(heading, (*notes, cited, figures), anchor="articles")]


def _sentence(words: str) -> str:
    return f"{words[0].upper()}{words[1:]}."
