"""The command line: the only package that prints or exits (entry point: cli.commands:main)."""

# The face: what other packages may import from this one, by module ("*": the
# module itself). tests/unit/test_layers.py holds every import across packages to it;
# a name another package needs is added here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "commands": ("main",),
}
