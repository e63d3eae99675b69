"""The session a run starts with: what is recorded before anything is measured.

The plan, each task's description, the profiles as run and the aged twins' group,
with the host's facts and tool versions: the provenance a report reads back; and
what the results' comparison key needs that only this run knows (the class of
device, each task's version and tools, a guest's kernel release: session/key.py).
"""

from __future__ import annotations

from typing import Any

from fsarena import __version__
from fsarena.guest.kernels import GUESTS
from fsarena.plan.model import Plan
from fsarena.run.events import now
from fsarena.session.file import Session
from fsarena.session.key import KEY_SCHEME
from fsarena.targets.device_class import for_target


def new_session(plan: Plan, host: dict[str, object], tool_versions: dict[str, str]) -> Session:
    """A session carrying the plan and its provenance, before anything is measured."""
    classes = {name: plan.task_class(name) for name in plan.tasks}
    return Session(
        tool_version=__version__,
        created_at=now(),
        host=dict(host),
        tool_versions=tool_versions,
        plan={
            **plan.summary(),
            "task_info": {
                name: {
                    "kind": task.kind,
                    "timed": task.timed,
                    "writes": task.writes,
                    "payload": task.payload,
                    "description": task.describe(),
                    "datasets": list(task.datasets),
                    **({"columns": list(c)} if (c := task.columns) else {}),
                    **({"fresh": True} if task.fresh else {}),
                }
                for name, task in classes.items()
            },
        },
        profiles_as_run={
            **{
                p.name: {**p.to_dict(), "image_size_bytes": plan.image_size_for(p)}
                for p in plan.profiles()
            },
            **aged_profiles(plan),
        },
        comparison=comparison_facts(plan),
    )


def comparison_facts(plan: Plan) -> dict[str, Any]:
    """What the comparison key takes from this run: where the filesystems are made (sysfs),
    each task's version and tools as this fsarena declares them, each guest's kernel."""
    return {
        "scheme": KEY_SCHEME,
        "device": for_target(plan.device, plan.workdir).to_dict(),
        "tasks": {
            name: {"version": task.key_version(), "tools": [t.name for t in task.tools]}
            for name in plan.tasks
            if (task := plan.task_class(name))
        },
        "kernels": {
            p.name: GUESTS[p.guest].release() for p in plan.profiles() if p.guest in GUESTS
        },
    }


def aged_profiles(plan: Plan) -> dict[str, dict[str, Any]]:
    """profiles_as_run of the aged filesystems: their own group, their fresh twin named."""
    if plan.age is None:
        return {}
    return {
        plan.aged_name(p.name): {
            **p.to_dict(),
            "image_size_bytes": plan.image_size_for(p),
            "aged": plan.age.name,
            "fresh": p.name,
            "group": f"aged:{p.group}",
        }
        for p in plan.profiles()
    }
