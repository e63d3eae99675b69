"""Running a plan: preflight and launch, the runner and its sequences, faults, resume,
and the power-loss test's command.
"""

# The face: what other packages may import from this one, by module ("*": the
# module itself). tests/unit/test_layers.py holds every import across packages to it;
# a name another package needs is added here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "agingprobe": ("probe_at_launch",),
    "estimate": (
        "NO_ESTIMATE",
        "estimate",
        "report_reserve",
    ),
    "events": ("Event",),
    "launch": (
        "Launch",
        "check_device",
        "check_leftovers",
        "describe",
        "prepare",
        "refuse_leftovers",
        "require_ready",
        "space_needed",
        "workdir_lock",
    ),
    "new_session": ("new_session",),
    "optionprobe": ("probe_here",),
    "powerloss_session": ("run_powerloss",),
    "preflight": (
        "check_results_dir",
        "existing_parent",
        "host_facts",
        "preflight",
        "tool_versions",
    ),
    "resume": (
        "check_unchanged",
        "plan_of",
        "resumable",
    ),
    "runner": ("Runner",),
    "scope": ("SessionUnsaved",),
}
