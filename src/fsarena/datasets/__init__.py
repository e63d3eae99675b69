"""Datasets: seeded specs, manifests and verification, generators, the real Linux source,
git history, Debian packages, the user's own directory, and server workloads' parameters;
made by themselves (making.py), not through the measurement seam.
"""

# The face: what other packages may import from this one, by module ("*": the
# module itself). tests/unit/test_layers.py holds every import across packages to it;
# a name another package needs is added here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "debs": ("DebsSpec",),
    "gitrepo": (
        "GIT_ENV",
        "GitRepoSpec",
        "REPO_DIR",
        "replay_line",
    ),
    "linux_source": (
        "KERNEL_LIKE",
        "KernelSourceSpec",
        "TarballSpec",
    ),
    "making": (
        "*",
        "Made",
    ),
    "manifest": (
        "DIGEST_ALGORITHM",
        "FileEntry",
        "Manifest",
        "bytes_digest",
    ),
    "numeric": (
        "raw_words",
        "uniforms",
    ),
    "pglog": ("PgLogSpec",),
    "realistic": (
        "SizeSpec",
        "SmallFilesSpec",
        "TextTreeSpec",
        "histogram",
    ),
    "spec": (
        "ARTICLE_A_ISO",
        "DatasetSpec",
        "LargeFileSpec",
        "Layout",
        "MIB",
        "WorkloadSpec",
        "check_factor",
        "require",
    ),
    "textwrite": (
        "pieces",
        "write_all",
    ),
    "tree": (
        "ARTICLE_A_TREE",
        "TreeSpec",
    ),
    "userdir": ("DirectorySpec",),
    "verify": ("verify_where",),
}
