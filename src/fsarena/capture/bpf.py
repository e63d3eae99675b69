"""The bpftrace program a capture runs, made from the call table, and the records it prints.

One program, generated: for each call of capture/calls.py, an entry probe on
tracepoint:syscalls:sys_enter_<name> that keeps its arguments per thread in
maps, and an exit probe that prints one record when the call returns. The
entry probe reads the clock last and the exit probe first, so a call's
duration holds the system call and not the probes' own work. The filter is a
set of processes (`@pids`, seeded with the traced ones; sched_process_fork adds
every child, so a service's workers are followed) or, on cgroup v2, the
cgroup's id.

A record is one line of space-separated integers:

    NAME START_NS DURATION_NS PID TID RESULT SEQ OVERHEAD_NS I0 I1 I2 I3 I4 I5

and a call with paths prints each at its entry, on a line of its own:

    path TID SEQ INDEX\tPATH

SEQ numbers the thread's calls with paths, so the two join whatever order the
per-CPU buffers are read in (a thread may return on another CPU than it
entered on); a path printed at entry keeps the 200-byte string off the exit
probe's 512-byte BPF stack.

START_NS is the kernel's monotonic clock (CLOCK_MONOTONIC, as Python's
time.monotonic_ns). OVERHEAD_NS is the probes' own time in the gap before the call
(this call's entry probe up to its clock read, and the thread's previous exit probe
after its clock read): a traced process thinks that much longer between calls than
it would untraced, and a paced replay takes it out of the think time. I0..I5 are the
call's integers in the order of the table;
an open's I3..I5 are read from the file it opened: 1 when the open created it
(FMODE_CREATED), its size and its mode, so the resolver knows what was there
before. fork, exec and exit of a traced task are records of the same shape
(fork's RESULT is the child's id).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fsarena.capture.calls import CALLS, Call

# include/linux/fs.h: `#define FMODE_CREATED ((__force fmode_t)(1 << 20))`, set on a
# file whose open created it (checked on this kernel: tests/integration/test_capture.py).
FMODE_CREATED = 1 << 20
S_IFMT, S_IFREG, S_IFDIR = 0o170000, 0o100000, 0o040000
READY = "fsarena-capture-ready"
INTS = 6  # integers per record after the result
TASK_EVENTS = ("fork", "exec", "exit")  # records of a traced task's life, not calls
# Paths longer than this (bpftrace's BPFTRACE_STRLEN, at most 200 in 0.17) are cut:
# the resolver counts them and the summary says so.
STRLEN = 200


@dataclass(frozen=True)
class Filter:
    """Which tasks the program traces: a set of processes (and their children), or a cgroup."""

    pids: tuple[int, ...] = ()
    cgroup_v2: str = ""  # a cgroup v2 directory: every task in it
    # Processes traced beside the cgroup's (capture/cost.py's loop), not their children.
    also: tuple[int, ...] = ()

    def predicate(self) -> str:
        if not self.cgroup_v2:
            return "@pids[pid]"
        in_cgroup = f'cgroup == cgroupid("{self.cgroup_v2}")'
        return f"({in_cgroup} || @pids[pid])" if self.also else in_cgroup

    def seeded(self) -> tuple[int, ...]:
        """The processes the program's @pids starts with."""
        return self.also if self.cgroup_v2 else (*self.pids, *self.also)


def _int(expr: str) -> str:
    if expr.lstrip("-").isdigit():
        return f"(int64){expr}"
    return f"(int64)args->{expr}"


def _entry(call: Call, when: str) -> str:
    values = [_int(e) for e in call.ints]
    if call.pos:
        values.append("(int64)$f->f_pos")
    values += ["(int64)0"] * (5 - len(values))
    body = ["@n[tid] = @n[tid] + 1;"] if call.strings else []
    body += [
        f'printf("path %d %lld {i}\\t%s\\n", tid, @n[tid], str(args->{s}));'
        for i, s in enumerate(call.strings)
    ]
    body += [
        f"@a[tid] = ({', '.join(values)});",
        "@o[tid] = @x[tid] - $e0;",  # + the start below: the probes' time before the call
        "@t[tid] = nsecs;",  # the clock last
    ]
    cond = [f"({call.when})"] if call.when else []
    lines = [f"tracepoint:syscalls:sys_enter_{call.syscall} /{when}/ {{", "  $e0 = nsecs;"]
    if call.fd:
        lines.append(f"  $f = *(curtask->files->fdt->fd + (uint64)args->{call.fd});")
        lines.append(f"  $m = $f->f_inode->i_mode & {S_IFMT};")
        cond.append(f"($m == {S_IFREG} || $m == {S_IFDIR})")
    if cond:
        lines.append(f"  if ({' && '.join(cond)}) {{")
        lines += [f"    {b}" for b in body]
        lines.append("  }")
    else:
        lines += [f"  {b}" for b in body]
    return "\n".join([*lines, "}"])


def _exit(call: Call) -> str:
    lines = [f"tracepoint:syscalls:sys_exit_{call.syscall} /@t[tid]/ {{", "  $now = nsecs;"]
    lines.append("  $a = @a[tid];")
    ints = ["$a.0", "$a.1", "$a.2", "$a.3", "$a.4", "(int64)0"]
    if call.opens:
        lines += [
            "  $created = (int64)0; $size = (int64)-1; $mode = (int64)0;",
            "  if (args->ret >= 0) {",
            "    $o = *(curtask->files->fdt->fd + (uint64)args->ret);",
            f"    $created = ($o->f_mode & {FMODE_CREATED}) ? (int64)1 : (int64)0;",
            "    $size = (int64)$o->f_inode->i_size;",
            "    $mode = (int64)$o->f_inode->i_mode;",
            "  }",
        ]
        ints = ["$a.0", "$a.1", "$a.2", "$created", "$size", "$mode"]
    fmt = f"{call.name} %llu %llu %d %d %lld %lld %lld" + " %lld" * INTS + "\\n"
    seq = "@n[tid]" if call.strings else "(int64)0"
    overhead = "@o[tid] + (int64)@t[tid]"
    args = ["@t[tid]", "$now - @t[tid]", "pid", "tid", "(int64)args->ret", seq, overhead, *ints]
    lines.append(f'  printf("{fmt}", {", ".join(args)});')
    lines.append("  delete(@t[tid]); delete(@a[tid]);")
    lines.append("  @x[tid] = nsecs - $now;")  # this probe's time after the clock: the next gap's
    return "\n".join([*lines, "}"])


def _task_events(when: str, follow: bool) -> list[str]:
    zeros = " 0" * (INTS + 2)
    fork = f'printf("fork %llu 0 %d %d %d{zeros}\\n", nsecs, pid, tid, args->child_pid);'
    add = "@pids[args->child_pid] = 1; " if follow else ""
    return [
        f"tracepoint:sched:sched_process_fork /{when}/ {{ {add}{fork} }}",
        f'tracepoint:sched:sched_process_exec /{when}/ {{ printf("exec %llu 0 %d %d 0{zeros}\\n",'
        " nsecs, pid, tid); }",
        f'tracepoint:sched:sched_process_exit /{when}/ {{ printf("exit %llu 0 %d %d 0{zeros}\\n",'
        " nsecs, pid, tid); }",
    ]


def program(
    target: Filter, ready_file: str = "", drain: tuple[int, str] | None = None,
    calls: tuple[Call, ...] = CALLS,
) -> str:  # fmt: skip
    """The whole bpftrace program for a filter.

    ready_file: made (relative to bpftrace's working directory) when every probe is
    attached (BEGIN runs then), through bpftrace's system() (it needs --unsafe): with its
    output fully buffered, a printed mark would only reach the reader when the buffer fills.
    drain: (fsarena's pid, a file): the file is made when bpftrace has read that process's
    getppid(2), which fsarena calls once the traced calls are over, so that bpftrace is
    stopped only after it read the records still in its ring buffers (stopped sooner, it
    dropped the last ones).
    """
    when = target.predicate()
    seed = "".join(f"@pids[{p}] = 1; " for p in target.seeded())
    touch = f"system(\"touch '{ready_file}'\"); " if ready_file else ""
    parts = [f'BEGIN {{ {seed}{touch}printf("{READY}\\n"); }}']
    if drain is not None:
        parts.append(f"tracepoint:syscalls:sys_enter_getppid /pid == {drain[0]}/ "
                     f"{{ system(\"touch '{drain[1]}'\"); }}")  # fmt: skip
    parts += _task_events(when, follow=not target.cgroup_v2)
    for call in calls:
        parts += [_entry(call, when), _exit(call)]
    parts.append("END { clear(@t); clear(@a); clear(@n); clear(@o); clear(@x); clear(@pids); }")
    return "\n".join(parts) + "\n"


@dataclass(frozen=True)
class RawCall:
    """One record as the tracer printed it (see the module docstring), its paths joined."""

    name: str
    start_ns: int
    duration_ns: int
    pid: int
    tid: int
    result: int
    ints: tuple[int, ...]
    paths: tuple[str, ...] = ()
    overhead_ns: int = 0  # the tracer's own time in the gap before the call


@dataclass
class Reader:
    """Records from the tracer's lines, each call's paths joined to it by (TID, SEQ)."""

    pending: dict[tuple[int, int], dict[int, str]] = field(default_factory=dict)
    other: list[str] = field(default_factory=list)  # lines that are no record (bpftrace's own)

    def feed(self, line: str) -> RawCall | None:
        """The record a line completes, or None (a path line, or not a record)."""
        line = line.rstrip("\n")
        if line.startswith("path "):
            head, _, path = line.partition("\t")
            parts = head.split(" ")
            if len(parts) == 4 and all(p.lstrip("-").isdigit() for p in parts[1:]):
                key = (int(parts[1]), int(parts[2]))
                self.pending.setdefault(key, {})[int(parts[3])] = path
                return None
        fields = line.split(" ")
        if len(fields) != 8 + INTS or not fields[1].isdigit():
            self.other.append(line)
            return None
        try:
            start, duration, pid, tid, result, seq, overhead, *ints = (int(f) for f in fields[1:])
        except ValueError:
            self.other.append(line)
            return None
        found = self.pending.pop((tid, seq), {}) if seq else {}
        paths = tuple(found[i] for i in sorted(found))
        # An overhead beyond a second is no probe's: the thread's first call (no earlier exit)
        overhead = overhead if 0 <= overhead < 1_000_000_000 else 0
        return RawCall(fields[0], start, duration, pid, tid, result, tuple(ints), paths, overhead)
