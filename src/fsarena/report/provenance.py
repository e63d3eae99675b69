"""Where, with what and how the numbers were measured: the report's last section, read back.

Every figure here is what the session recorded (the plan as stored, the host, the
tools' versions, each filesystem's mkfs and mount options as run, the datasets'
digests), never what a default would have been. A report read top to bottom
(text, Markdown) gives the filesystems as run and the tools; a page gives it all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fsarena.report.comparison import fmt
from fsarena.report.document import Block, Forms, Heading, Section, Table
from fsarena.report.machine_section import machine_rows
from fsarena.report.outcome import status_of
from fsarena.session.file import Session
from fsarena.session.records import given


def section(session: Session) -> Section:
    """Each filesystem's mkfs and mount options as run and the tools' versions; on a page,
    the session, host, machine, plan, dataset source and datasets too."""
    blocks = (Forms(short(session), full(session)),)
    heading = Heading("Environment and provenance", anchor="provenance")
    return Section(heading, blocks, anchor="provenance")


def short(session: Session) -> tuple[Block, ...]:
    blocks: list[Block] = []
    if session.profiles_as_run:
        rows = tuple(
            (
                name,
                p.driver or "",
                "`" + " ".join(p.mkfs) + "`",
                ",".join(p.mount_options) or "defaults",
            )
            for name, p in sorted(session.profiles_as_run.items())
        )
        headers = ("filesystem", "driver", "mkfs", "mount options")
        blocks.append(Table(headers, rows, title="Filesystems as run", detail=True))
    if session.tool_versions:
        tools = tuple(sorted(session.tool_versions.items()))
        blocks.append(Table(("tool", "version"), tools, title="Tool versions", detail=True))
    return tuple(blocks)


def full(s: Session) -> tuple[Block, ...]:
    stored = s.plan.model_dump(mode="json")  # every key as stored, the unknown ones too
    plan = {k: v for k, v in stored.items() if k not in ("task_info", "filesystems", "tasks")}
    about = {
        "fsarena": s.tool_version,
        "schema version": str(s.schema_version),
        "status": status_of(s),
        "started": s.created_at,
        "finished": s.finished_at or "–",
        "filesystems": ", ".join(s.filesystems()),
        "tasks": ", ".join(s.tasks()),
        "order per repetition": "; ".join(" ".join(o) for o in s.order) or "–",
    }
    profiles = tuple(
        (
            name,
            p.fstype,
            p.driver or "",
            " ".join(p.mkfs),
            ",".join(p.mount_options) or "defaults",
            fmt(float(p.image_size_bytes) / 1e6) + " MB",
            p.notes,
        )
        for name, p in sorted(s.profiles_as_run.items())
    )
    datasets = tuple(
        (
            name,
            d.spec.description,
            str(given(d.files, "")),
            fmt(float(d.total_bytes) / 1e6) + " MB",
            d.manifest_digest[:16],
        )
        for name, d in sorted(s.datasets.items())
    )
    machine = (_kv("Emulated machine", machine_rows(s)),) if s.machine else ()
    return (
        _kv("Session", list(about.items())),
        _kv("Host", _flat(s.host.model_dump(mode="json"))),
        *machine,
        _kv("Plan", _flat(plan)),
        _kv("Dataset source", _flat(s.source.model_dump(mode="json"))),
        _kv("Tool versions", sorted(s.tool_versions.items())),
        Table(
            ("name", "type", "driver", "mkfs", "mount options", "image", "notes"),
            profiles,
            style="text",
            title="Filesystems as run",
        ),
        Table(
            ("name", "spec", "files", "size", "manifest digest"),
            datasets,
            style="text",
            title="Datasets",
        ),
    )


def _kv(title: str, rows: list[tuple[str, str]]) -> Table:
    return Table(("", ""), tuple(rows), style="kv", title=title)


def _flat(data: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """Nested records as dotted keys ("cpu.model"), lists joined by spaces, None as "–"."""
    rows = []
    for key in sorted(data):
        value = data[key]
        if isinstance(value, Mapping):
            rows.extend(_flat(value, f"{prefix}{key}."))
        elif isinstance(value, list | tuple):
            rows.append((f"{prefix}{key}", " ".join(str(v) for v in value)))
        else:
            rows.append((f"{prefix}{key}", "–" if value is None else str(value)))
    return rows
