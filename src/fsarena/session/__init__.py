"""The session file: the one versioned record that crosses from measurement to reporting."""

# The face: what other packages may import from this one, by module ("*": the
# module itself). tests/unit/test_layers.py holds every import across packages to it;
# a name another package needs is added here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "digest": (
        "session_digest",
        "short",
    ),
    "file": (
        "CeilingSample",
        "CheckRecord",
        "Run",
        "RunStatus",
        "Session",
        "claim",
        "create",
        "load",
        "newest",
        "read_json",
        "refusal",
        "require_derived_free",
        "save",
        "session_files",
    ),
    "journal": ("Journal",),
    "key": (
        "KEY_SCHEME",
        "KeyParts",
        "digest",
        "missing",
        "parts",
        "series",
    ),
    "outputs": (
        "derived",
        "replaceable",
        "require_free",
        "write_file",
        "write_tree",
    ),
    "records": (
        "AgingRecord",
        "CapturedRecord",
        "DatasetRecord",
        "DatasetSpecRecord",
        "DropRecord",
        "HostFacts",
        "MachineLimits",
        "MachineProbe",
        "MachineProfileRecord",
        "MachineRecord",
        "PlanRecord",
        "ProfileRecord",
        "RaceRecord",
        "RoundTiming",
        "SourceRecord",
        "StopRecord",
        "TargetRecord",
        "TaskInfo",
        "given",
    ),
}
