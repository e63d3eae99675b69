"""The plan: suites (built-in TOML and the user's), flags, the dataset catalog, machine
profiles as data, dataset floors; validated completely before anything runs.
"""

# Here, not in plan.model, so that the command line's options can show them without
# importing the plan's machinery (pydantic, the tasks): `fsarena --help` stays light.
DEFAULT_WORKDIR = "/var/tmp/fsarena"
DEFAULT_SUITE = "article-a-2006"
# --replay-timing: the timing models it replays in (each replay task declares its own).
REPLAY_TIMINGS = {"fast": ("fast",), "paced": ("paced",), "both": ("fast", "paced")}

# The face: what other packages may import from this one, by module ("*": the
# module itself). tests/unit/test_layers.py holds every import across packages to it;
# a name another package needs is added here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "": (
        "DEFAULT_SUITE",
        "DEFAULT_WORKDIR",
        "REPLAY_TIMINGS",
    ),
    "floors": ("require_proportional",),
    "machines": (
        "Limits",
        "MachineProfile",
        "builtin_machines",
        "host_cpu_mhz",
        "limits_for",
    ),
    "model": (
        "AGED_TASKS",
        "Plan",
        "fresh_seed",
        "make_plan",
    ),
    "suite": (
        "builtin_suites",
        "load_suite",
        "parse_size",
    ),
    "tuning": (
        "BUDGET_RUNS",
        "picked_options",
        "rounds_within",
        "sweep",
    ),
    "yours": ("user_suite",),
}
