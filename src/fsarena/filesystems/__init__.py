"""Filesystems: the profile table (data: the only place that names a filesystem) and the
drivers that can run each one here (kernel, FUSE, guest kernels), found by probing.
"""

# The face: what other packages may import from this one, by module ("*": the
# module itself). tests/unit/test_layers.py holds every import across packages to it;
# a name another package needs is added here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "drivers": (
        "choose",
        "drivers_of",
        "guest_unavailable",
        "plan_names",
        "probe",
        "refuse_unbootable",
        "unavailable",
        "wanting_a_guest",
        "why_chosen",
    ),
    "options": (
        "ANY_FS",
        "Option",
        "configuration",
        "options_for",
        "table",
        "user_option",
    ),
    "profiles": (
        "FilesystemProfile",
        "POWERLOSS_CONTROL",
        "PROFILES",
        "REFERENCE_FILESYSTEM",
        "SOURCE_FILESYSTEM",
    ),
    "variants": (
        "Support",
        "derive",
        "guest_kernels_of",
        "profile_for",
        "resolve",
        "split_name",
    ),
}
