"""Capture: a running service's file-system calls recorded into a trace file, and the trace format.

`fsarena capture` traces the calls in the kernel (bpftrace on the syscall
tracepoints; strace as a stated fallback for a command), resolves each file
descriptor to the path it names, infers the tree the calls found at the start,
measures what it cannot replay, anonymises the paths and writes one versioned,
compressed trace (capture/trace.py); capture/program.py turns a trace into the
native replayer's program. Standard library only, so that the capture runs on
a production machine with nothing but python3 and bpftrace.
"""

# The face: what other packages may import from this one, by module ("*": the
# module itself). tests/unit/test_layers.py holds every import across packages to it;
# a name another package needs is added here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "dataset": ("TraceSpec",),
    "facts": ("*",),
    "program": ("Compiler",),
    "record": (
        "Request",
        "capture",
    ),
}
