"""Guest kernels: run a sequence's tasks inside a kernel that has the filesystem the host lacks.

The host boots a guest (kernels.py) with the target image as its first disk and
the datasets on a read-only second disk; an agent inside (agent.py, standard
library and fsarena.measure.collect only) executes what the runner asks, and the host
side (host.py) is a TaskExecutor that forwards every call as a JSON line. The
runner's loop and the tasks do not know they run in a guest.
"""

# The face: what other packages may import from this one, by module ("*": the
# module itself). tests/unit/test_layers.py holds every import across packages to it;
# a name another package needs is added here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "boots": (
        "booted",
        "kept",
    ),
    "host": ("boot",),
    "install": ("install_and_boot",),
    "kernels": ("GUESTS",),
}
