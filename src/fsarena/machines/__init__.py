"""Machine profiles: run a comparison under an old machine's memory, CPU and disk limits.

The articles ran on a Celeron 533 with 512 MB RAM, a Pentium III with 256 MB,
disks of 12.5-75 MB/s. A host with 24 GiB of RAM and a disk writing GB/s
holds whole datasets in its page cache, and a 700 MB copy takes a fraction of
a second, with noise that swamps the differences. A machine profile gives the
run the old machine's limits and records them, and their proof, with the
results.

- fsarena.plan.machines: the profiles as data (builtin.toml, users' TOML), resolved to
  kernel units (in the plan, which holds what to run);
- backends.py: cgroup v1 and v2, the two ways the kernel is told;
- enforce.py: a profile in force for one run (always undone) and the executor using it;
- probe.py: proof that it is in force, measured before the run;
- run.py: the executor a run gets, with its machine applied, probed and recorded.

This package imports nothing at import time: the plan reads its builtin.toml.
"""

# The face: what other packages may import from this one, by module ("*": the
# module itself). tests/unit/test_layers.py holds every import across packages to it;
# a name another package needs is added here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "run": (
        "executor_for",
        "plan_lines",
        "planned",
    ),
}
