"""The capture's pure parts: the bpftrace program and its records, the resolver, the initial
tree, anonymisation, the trace file (and its refusals), the replayer's program."""

from __future__ import annotations

import errno
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from fsarena.capture import cost, summary, trace
from fsarena.capture.anonymise import Anonymiser, anonymised
from fsarena.capture.bpf import FMODE_CREATED, Filter, RawCall, Reader, program
from fsarena.capture.calls import CALLS, REPLAYED, UNREPLAYABLE
from fsarena.capture.facts import Found
from fsarena.capture.program import Compiler, link_target, relative
from fsarena.capture.resolve import Resolver, Scope
from fsarena.capture.tree import initial_tree
from fsarena.errors import FsarenaError

O_WRONLY, O_CREAT, O_TRUNC, O_CLOEXEC = 0o1, 0o100, 0o1000, 0o2000000
S_IFREG, S_IFDIR = 0o100644, 0o040755


# ---------------------------------------------------------------- the program and its records


def test_the_program_has_an_entry_and_exit_probe_for_every_call() -> None:
    text = program(Filter(pids=(42,)))
    for call in CALLS:
        assert f"tracepoint:syscalls:sys_enter_{call.syscall} /@pids[pid]/" in text
        assert f"tracepoint:syscalls:sys_exit_{call.syscall} /@t[tid]/" in text
    assert "@pids[42] = 1;" in text
    assert "@pids[args->child_pid] = 1" in text  # children followed
    assert f"f_mode & {FMODE_CREATED}" in text


def test_a_cgroup_v2_filter_follows_the_cgroup_not_children() -> None:
    text = program(Filter(cgroup_v2="/sys/fs/cgroup/system.slice/db.service"))
    assert 'cgroup == cgroupid("/sys/fs/cgroup/system.slice/db.service")' in text
    assert "@pids[args->child_pid]" not in text


def test_the_tracer_cost_loop_is_traced_beside_a_cgroup_or_the_pids() -> None:
    by_cgroup = program(Filter(cgroup_v2="/sys/fs/cgroup/db.service", also=(77,)))
    assert '/(cgroup == cgroupid("/sys/fs/cgroup/db.service") || @pids[pid])/' in by_cgroup
    assert "@pids[77] = 1;" in by_cgroup and "@pids[args->child_pid]" not in by_cgroup
    by_pids = program(Filter(pids=(42,), also=(77,)))
    assert "@pids[42] = 1; @pids[77] = 1;" in by_pids


def _loop_records(iteration_ns: int, overhead_ns: int, start: int = 5_000_000) -> list[RawCall]:
    """The cost loop as the tracer prints it: the interpreter's start, then its iterations."""
    ints = (0,) * 6
    startup = [RawCall("lseek", 1000 * i, 300, 9, 9, 0, ints) for i in range(3)]
    loop = []
    for i in range(cost.LOOP):
        at = start + i * iteration_ns
        loop.append(RawCall("lseek", at, 400, 9, 9, 0, ints, (), overhead_ns))
        loop.append(RawCall("fstat", at + iteration_ns // 2, 500, 9, 9, 0, ints, (), overhead_ns))
    return [*startup, RawCall("exec", 4_000_000, 0, 9, 9, 0, ints), *loop]


def test_the_tracer_cost_per_call_is_what_its_probes_did_not_time() -> None:
    found = cost.probe_cost(_loop_records(9000, 2500), bare_ns=1500.0)
    assert found is not None
    assert found.iterations == cost.LOOP - 1 and found.calls_per_iteration == 2.0
    assert found.traced_iteration_ns == 9000 and found.probes_iteration_ns == 5000
    assert found.per_call_ns == (9000 - 1500 - 5000) / 2
    assert cost.probe_cost(_loop_records(9000, 4000), bare_ns=1500.0).per_call_ns == 0.0  # type: ignore[union-attr]
    assert cost.probe_cost(_loop_records(9000, 2500)[: cost.LOOP], bare_ns=1500.0) is None


def test_the_clock_is_read_last_at_entry_and_first_at_exit() -> None:
    """A call's duration holds the call, not the probes' own work."""
    blocks = program(Filter(pids=(1,))).split("tracepoint:syscalls:")
    entry = next(b for b in blocks if b.startswith("sys_enter_openat "))
    exit_ = next(b for b in blocks if b.startswith("sys_exit_openat "))
    lines = [ln.strip() for ln in entry.splitlines() if ln.strip() not in ("", "}")]
    assert lines[-1] == "@t[tid] = nsecs;"
    assert exit_.splitlines()[1].strip() == "$now = nsecs;"


def test_records_join_their_paths_whatever_order_the_buffers_give() -> None:
    reader = Reader()
    # the exit record of a rename read before its paths (another CPU's buffer)
    lines = [
        "Attaching 111 probes...",
        "rename 1000 50 7 8 0 3 900 -100 -100 0 0 0 0",
        "path 8 3 0\t/srv/a",
        "path 8 3 1\t/srv/b c",
        "close 1100 5 7 8 0 0 200 4 0 0 0 0 0",
    ]
    got = [r for line in lines if (r := reader.feed(line + "\n")) is not None]
    assert [r.name for r in got] == ["rename", "close"]
    assert got[0].paths == ()  # its paths came later: the reader joins per (tid, seq)...
    reader = Reader()
    got = [r for line in [lines[2], lines[3], lines[1]] if (r := reader.feed(line)) is not None]
    assert got[0].paths == ("/srv/a", "/srv/b c")  # ...when they come first, as bpftrace prints
    assert got[0].overhead_ns == 900
    assert reader.other == []


def test_a_line_that_is_no_record_is_kept_aside_and_lost_records_counted() -> None:
    from fsarena.capture.tracer import lost_in

    reader = Reader()
    assert reader.feed("Lost 12 events\n") is None
    reader.feed("Lost 3 events\n")
    assert reader.other == ["Lost 12 events", "Lost 3 events"]
    assert lost_in(reader.other) == 15  # bpftrace prints them among its output


def test_bpftrace_is_stopped_only_once_it_read_fsarenas_own_mark() -> None:
    text = program(Filter(pids=(7,)), "ready", (4242, "drained"))
    assert "tracepoint:syscalls:sys_enter_getppid /pid == 4242/" in text
    assert "system(\"touch 'drained'\")" in text and "system(\"touch 'ready'\")" in text


def test_every_call_type_is_replayed_unreplayable_or_bookkeeping() -> None:
    from fsarena.capture.calls import BOOKKEEPING

    names = {c.name for c in CALLS}
    assert names <= REPLAYED | UNREPLAYABLE | BOOKKEEPING
    assert not REPLAYED & UNREPLAYABLE


# ---------------------------------------------------------------- the resolver


def _call(name: str, start: int, result: int, *ints: int, paths: tuple[str, ...] = (),
          pid: int = 10, tid: int = 10, dur: int = 1000) -> RawCall:  # fmt: skip
    padded = (*ints, *([0] * (6 - len(ints))))
    return RawCall(name, start, dur, pid, tid, result, padded, paths)


def _open(start: int, path: str, fd: int, flags: int = 0, created: int = 0, size: int = 0,
          mode: int = S_IFREG, **kw: Any) -> RawCall:  # fmt: skip
    return _call("open", start, fd, -100 & 0xFFFFFFFF, flags, 0o644, created, size, mode,
                 paths=(path,), **kw)  # fmt: skip


def _resolver(under: tuple[str, ...] = ("/srv",)) -> Resolver:
    resolver = Resolver(Scope(under=under), start_ns=0)
    resolver.process(10, "/srv", [(1, "/dev/pts/0", 0o2, 0)])
    return resolver


def test_relative_paths_resolve_against_cwd_and_dirfds() -> None:
    r = _resolver()
    r.feed(_open(1000, "data/x.db", 3, flags=O_WRONLY | O_CREAT, created=1))
    r.feed(_open(2000, "/srv/data", 4, mode=S_IFDIR))
    r.feed(_call("open", 3000, 5, 4, 0, 0, 0, 10, S_IFREG, paths=("y.db",)))
    r.feed(_call("chdir", 4000, 0, paths=("/srv/data/sub",)))
    r.feed(_call("stat", 5000, -errno.ENOENT, -100 & 0xFFFFFFFF, 0, paths=("../z",)))
    paths = [e[7] if e[4] == "open" else e[6] for e in r.events]
    assert paths == ["/srv/data/x.db", "/srv/data", "/srv/data/y.db", "/srv/data/z"]


def test_out_of_scope_calls_are_counted_not_kept() -> None:
    r = _resolver()
    r.feed(_open(1000, "/usr/lib/libc.so.6", 3))
    r.feed(_call("read", 2000, 832, 3, 832, 0))
    r.feed(_call("mmap", 3000, 0, 3, 4096, 1, 2, 0))
    assert r.events == []
    assert r.counts.out_of_scope == {"open": 1, "read": 1, "mmap": 1}
    assert r.counts.out_of_scope_bytes == 832


def test_the_tracers_time_on_a_call_left_out_is_carried_by_the_threads_next_event() -> None:
    """The probes' time on the dynamic loader's calls is no think time of the service's:
    the thread's next event carries it, another thread's does not."""
    from dataclasses import replace

    r = _resolver()
    r.feed(replace(_open(1000, "/usr/lib/libc.so.6", 3), overhead_ns=700))
    r.feed(replace(_call("read", 2000, 832, 3, 832, 0), overhead_ns=300))
    r.feed(replace(_call("stat", 2500, 0, -100 & 0xFFFFFFFF, 0, paths=("/srv/a",), tid=11),
                   overhead_ns=50))  # fmt: skip
    r.feed(replace(_open(3000, "/srv/x.db", 4, flags=O_WRONLY | O_CREAT, created=1),
                   overhead_ns=200))  # fmt: skip
    r.feed(replace(_call("write", 4000, 5, 4, 5, 0), overhead_ns=100))
    assert [(e[3], e[4], e[-1]) for e in r.events] == [
        (11, "stat", 50),
        (10, "open", 1200),
        (10, "write", 100),
    ]


def test_a_descriptor_is_closed_for_real_only_by_its_last_holder() -> None:
    r = _resolver()
    r.feed(_open(1000, "/srv/log", 3, flags=O_WRONLY))
    r.feed(_call("dup", 2000, 5, 3))
    r.feed(_call("close", 3000, 0, 3))
    r.feed(_call("write", 4000, 10, 5, 10, 0))
    r.feed(_call("close", 5000, 0, 5))
    closes = [e for e in r.events if e[4] == "close"]
    assert [c[8] for c in closes] == [0, 1]  # last: only the second
    write = next(e for e in r.events if e[4] == "write")
    assert write[7] == closes[0][7]  # the dup names the same open (oid)


def test_a_forked_process_gets_a_copy_a_thread_shares() -> None:
    r = _resolver()
    r.feed(_open(1000, "/srv/f", 3))
    r.feed(_call("fork", 2000, 20, dur=0))  # becomes a process: pid 20 calls
    r.feed(_call("fork", 2100, 21, dur=0))  # becomes a thread of 10
    r.feed(_call("read", 3000, 1, 3, 1, 0, pid=10, tid=21))  # 21 is a thread of 10
    r.feed(_call("read", 3500, 1, 3, 1, 0, pid=20, tid=20))
    r.feed(_call("close", 4000, 0, 3, pid=20, tid=20))
    r.feed(_call("close", 5000, 0, 3))
    closes = [e for e in r.events if e[4] == "close"]
    assert [c[8] for c in closes] == [0, 1]  # the child's close is not the last
    assert r.counts.unknown_fd == 0


def test_exec_closes_the_close_on_exec_descriptors() -> None:
    r = _resolver()
    r.feed(_open(1000, "/srv/a", 3, flags=O_CLOEXEC))
    r.feed(_open(1100, "/srv/b", 4))
    r.feed(_call("exec", 2000, 0, dur=0))
    r.feed(_call("read", 3000, 1, 3, 1, 0))  # fd 3 is gone: unknown now
    closes = [e for e in r.events if e[4] == "close"]
    assert len(closes) == 1 and closes[0][9] == 1  # implicit: the kernel closed it
    assert r.counts.unknown_fd == 1


def test_the_first_evidence_decides_what_was_there() -> None:
    r = _resolver()
    r.feed(_open(1000, "/srv/new", 3, flags=O_WRONLY | O_CREAT, created=1))
    r.feed(_open(1100, "/srv/old", 4, flags=O_WRONLY | O_CREAT, size=777))
    r.feed(_open(1200, "/srv/trunc", 5, flags=O_WRONLY | O_TRUNC, size=0))
    r.feed(_call("stat", 1300, -errno.ENOENT, -100 & 0xFFFFFFFF, 0, paths=("/srv/absent",)))
    r.feed(_call("stat", 1400, 0, -100 & 0xFFFFFFFF, 0, paths=("/srv/ro",)))
    r.feed(_call("mkdir", 1500, -errno.EEXIST, -100 & 0xFFFFFFFF, 0o755, paths=("/srv/d",)))
    r.feed(_open(1600, "/srv/read", 6, size=100))
    r.feed(_call("read", 1700, 4000, 6, 8192, 0))  # it grew since? at least what was read
    ev = r.evidence
    assert ev["/srv/new"].existed is False
    assert (ev["/srv/old"].existed, ev["/srv/old"].size_bytes) == (True, 777)
    assert ev["/srv/trunc"].size_bytes == 0
    assert ev["/srv/absent"].existed is False
    assert ev["/srv/d"].kind == "d"

    def look(path: str) -> Found:
        return {"/srv/ro": Found("f", 55)}.get(path, Found(""))

    tree = initial_tree(ev, look)
    assert ["d", "/srv"] in tree
    assert ["f", "/srv/old", 777] in tree
    assert ["f", "/srv/ro", 55] in tree  # unchanged by the calls: as it is at the end
    assert ["f", "/srv/read", 4000] in tree  # at least as long as the reads reached
    assert not any(e[1] in ("/srv/new", "/srv/absent") for e in tree)
    assert tree.index(["d", "/srv"]) < tree.index(["d", "/srv/d"])  # parents first


def test_what_the_calls_made_or_moved_is_not_in_the_initial_tree() -> None:
    """A rename's target and a directory the calls made are the replay's to make: a later
    stat sees what the rename put there, not what was there (bench/RESULTS.md, issue 37:
    4,000 renames replayed over files the tree had made cost twice the capture's)."""
    r = _resolver()
    cwd = -100 & 0xFFFFFFFF
    r.feed(_call("stat", 1000, -errno.ENOENT, cwd, 0, paths=("a",)))
    for i, d in enumerate(("a", "a/0", "b", "b/0", "t")):
        r.feed(_call("mkdir", 1100 + i, 0, cwd, 0o755, paths=(d,)))
    r.feed(_open(1200, "a/0/f", 3, flags=O_WRONLY | O_CREAT, created=1))
    r.feed(_call("close", 1300, 0, 3))
    r.feed(_call("rename", 1400, 0, cwd, cwd, 0, paths=("a/0/f", "b/0/f")))
    r.feed(_call("stat", 1500, 0, cwd, 0, paths=("b/0/f",)))
    r.feed(_call("rename", 1600, 0, cwd, cwd, 0, paths=("t", "final")))
    r.feed(_open(1700, "final/x", 4, flags=O_WRONLY | O_CREAT, created=1))
    r.feed(_open(1800, "kept/y", 5, size=9))  # a file that was there: its directory too
    tree = initial_tree(r.evidence, lambda path: Found("f", 1))
    assert r.evidence["/srv/b/0/f"].existed is None  # the rename said nothing of its start
    assert [e[1] for e in tree] == ["/srv", "/srv/kept", "/srv/kept/y"]


def test_unreplayable_io_is_measured() -> None:
    r = _resolver()
    r.feed(_open(1000, "/srv/m", 3, flags=0o2))
    r.feed(_call("mmap", 2000, 0, 3, 1 << 20, 0x3, 0x1, 0))  # PROT_WRITE, MAP_SHARED
    r.feed(_call("msync", 3000, 0, 1 << 20, 4))
    r.feed(_call("write", 4000, 1 << 20, 3, 1 << 20, 0))
    counts = r.counts.unreplayable
    assert counts["mmap_calls"] == 1 and counts["mmap_shared_writable_bytes"] == 1 << 20
    told = summary.unreplayable(dict(counts), traced_bytes=1 << 20)
    assert told["share_pct"] == 50.0


# ---------------------------------------------------------------- figures


def test_percentiles_are_nearest_rank() -> None:
    values = list(range(1, 101))
    assert summary.percentile(values, 50) == 50
    assert summary.percentile(values, 99) == 99
    assert summary.percentile(values, 99.9) == 100
    assert summary.percentile([], 50) == 0.0


def test_captured_figures_leave_out_the_kernels_closes() -> None:
    events = [
        [0, 2000, 1, 1, "fsync", 0, 3, 0],
        [5, 4000, 1, 1, "fsync", 0, 3, 0],
        [9, 100, 1, 1, "close", 0, 3, 0, 1, 0],
        [9, 0, 1, 1, "close", 0, 4, 1, 1, 1],  # at exit: no call of the service's
    ]
    got = summary.captured(events)
    assert got["calls"] == 3
    assert got["fs_call_s"] == pytest.approx(6100e-9)
    assert got["per_call"]["fsync"]["p50_us"] == 2.0


# ---------------------------------------------------------------- anonymisation


def test_anonymised_paths_keep_structure_depth_and_extensions() -> None:
    a = Anonymiser(b"k" * 32)
    one = a.path("/var/lib/pg/base/16384/2619.db")
    two = a.path("/var/lib/pg/base/16385/2619.db")
    assert one.count("/") == 6 and one.endswith(".db")
    assert one.split("/")[:5] == two.split("/")[:5]  # shared parents, shared names
    assert one.split("/")[-1] == two.split("/")[-1]
    assert "pg" not in one and "2619" not in one
    assert a.path("../x/.hidden").startswith("../")
    assert a.path("../x/.hidden").split("/")[-1].startswith(".")
    assert Anonymiser(b"j" * 32).path("/var") != a.path("/var")  # another capture, another key
    assert Anonymiser(None).path("/var/x") == "/var/x"


def test_anonymised_names_keep_their_length_and_never_meet() -> None:
    """A directory's size follows its names' lengths: each keeps its length in bytes, and two
    names never become one, even where a length has fewer words than the trace has names."""
    a = Anonymiser(b"k" * 32)
    long = "1700000000.M12345P6789Q1.mailhost,S=2048,W=2090:2,S"  # a maildir message
    assert len(a.name(long)) == len(long.encode())
    assert len(a.name("été")) == len("été".encode())  # bytes, not characters
    assert len(a.name("2619.db")) == len("2619.db") and a.name("2619.db").endswith(".db")
    names = [chr(c) for c in range(33, 127) if chr(c) not in "./"]  # 92 one-character names
    names += [f"f{i}" for i in range(2000)]
    mapped = [a.name(n) for n in names]
    assert len(set(mapped)) == len(names)  # injective
    assert all(len(m) >= len(n) for m, n in zip(mapped, names, strict=True))
    one = [m for m, n in zip(mapped, names, strict=True) if len(n) == 1]
    assert sum(len(m) == 1 for m in one) >= 30  # the 36 words of one character, nearly all used
    assert all(len(m) == len(n) for m, n in zip(mapped[92:], names[92:], strict=True))
    assert [a.name(n) for n in names] == mapped  # the same name, the same word


def test_a_whole_trace_is_anonymised() -> None:
    t = trace.Trace(
        {"duration_s": 1.0},
        tree=[["d", "/srv"], ["l", "/srv/l", "/srv/t"]],
        preopened=[["fd", 0, 1, 3, "/srv/t", 0, 0]],
        events=[[0, 1, 1, 1, "rename", 0, "/srv/a", -1, "/srv/b", -1, 0, 0]],
    )
    out = anonymised(t, Anonymiser(b"k" * 32))
    text = json.dumps([out.tree, out.preopened, out.events])
    assert "srv" not in text


# ---------------------------------------------------------------- the trace file


def _a_trace(tmp_path: Path) -> Path:
    t = trace.Trace(
        {"duration_s": 2.0, "own_filesystem": {"fstype": "ext4", "device_class": "loop"},
         "captured": {"calls": 1, "fs_call_s": 0.5}},
        tree=[["d", "/srv"], ["f", "/srv/x", 10]],
        events=[[0, 500_000_000, 1, 1, "fsync", 0, 3, 0]],
    )  # fmt: skip
    path = tmp_path / "t.fstrace.gz"
    trace.write(t, path)
    return path


def test_a_trace_reads_back_as_written(tmp_path: Path) -> None:
    got = trace.read(_a_trace(tmp_path))
    assert got.header["format"] == trace.FORMAT and got.header["version"] == trace.VERSION
    assert got.tree == [["d", "/srv"], ["f", "/srv/x", 10]]
    assert got.summary.fstype == "ext4" and got.summary.fs_call_s == 0.5


def _rewritten(path: Path, lines: list[str]) -> None:
    with gzip.open(path, "wt") as f:
        f.write("".join(lines))


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        ("cut", "cut short"),
        ("no-end", "without its end mark"),
        ("count", "end mark counts"),
        ("json", "not JSON"),
        ("plain", "not gzip"),
        ("future", "version 99"),
        ("foreign", "not an fsarena trace"),
        ("empty", "empty trace"),
        ("record", "no trace record"),
    ],
)
def test_a_damaged_trace_is_refused_in_one_line(tmp_path: Path, damage: str, said: str) -> None:
    path = _a_trace(tmp_path)
    with gzip.open(path, "rt") as f:
        lines = f.readlines()
    if damage == "cut":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif damage == "no-end":
        _rewritten(path, lines[:-1])
    elif damage == "count":
        _rewritten(path, [*lines[:-1], '{"end": {"records": 7}}\n'])
    elif damage == "json":
        _rewritten(path, [lines[0], "[1, 2,\n", *lines[1:]])
    elif damage == "plain":
        path.write_text("".join(lines))
    elif damage == "future":
        _rewritten(path, [lines[0].replace('"version":1', '"version":99'), *lines[1:]])
    elif damage == "foreign":
        _rewritten(path, ['{"hello": 1}\n', *lines[1:]])
    elif damage == "empty":
        _rewritten(path, [])
    elif damage == "record":
        _rewritten(path, [lines[0], '["zz"]\n', *lines[1:]])
    with pytest.raises(FsarenaError) as caught:
        trace.read(path)
    assert said in str(caught.value) and "\n" not in str(caught.value)


# ---------------------------------------------------------------- the replayer's program


def test_paths_stay_under_the_root() -> None:
    assert relative("/srv/a") == "srv/a" and relative("/") == "."
    assert link_target("/etc/passwd", "/srv/data/l") == "../../etc/passwd"
    assert link_target("../../../../../../x", "/srv/data/l") == "../../x"  # never above /
    assert link_target("sib", "/srv/data/l") == "sib"


def _program(events: list[list[Any]]) -> list[str]:
    t = trace.Trace({"duration_s": 1.0}, tree=[["d", "/srv"]], events=events)
    return Compiler(t).compile().splitlines()


def _ops(lines: list[str]) -> list[list[int]]:
    at = next(i for i, ln in enumerate(lines) if ln.startswith("ops "))
    return [[int(v) for v in ln.split()] for ln in lines[at + 1 : at + 1 + int(lines[at][4:])]]


def test_calls_of_other_threads_on_a_path_wait_for_those_that_returned_first() -> None:
    events = [
        [0, 5_000, 1, 1, "open", 3, 0, "/srv/f", -1, O_WRONLY | O_CREAT, 0o644, 0],  # 0-5 us
        [10, 1_000, 1, 2, "stat", 0, "/srv/f", -1, 0, 0],  # thread 2, after the open returned
        [10, 1_000, 1, 1, "write", 5, 3, 0, 0, 5, 0],
        [11, 2_000, 1, 3, "stat", 0, "/srv/g", -1, 0, 0],  # another path: free
        [14, 1_000, 1, 2, "stat", 0, "/srv/f", -1, 0, 0],  # after thread 1's write returned
    ]
    ops = _ops(_program(events))
    deps = [op[15:] for op in ops]
    assert deps == [[], [0], [], [], [2]]  # its own earlier stat: its thread's order


def test_calls_that_overlapped_in_the_trace_stay_free_to_overlap() -> None:
    events = [
        [0, 50_000, 1, 1, "fsync", 0, 3, 0, 0],  # 0 .. 50 us
        [10, 1_000, 1, 2, "fstat", 0, 3, 0, 0],  # began while the fsync ran
    ]
    t = trace.Trace({}, preopened=[["fd", 0, 1, 3, "/srv/f", 2, 0]], events=events)
    lines = Compiler(t).compile().splitlines()
    assert [op[14] for op in _ops(lines)] == [0, 0]
    assert "pre 1" in lines and "0 0 2 0" in lines  # slot 0 (the oid), path 0, flags, pos


def test_only_the_last_close_of_a_description_is_replayed() -> None:
    events = [
        [0, 10, 1, 1, "close", 0, 3, 0, 0, 0, 0],
        [1, 10, 1, 1, "close", 0, 4, 0, 1, 0, 0],
    ]
    assert len(_ops(_program(events))) == 1


def test_writes_replay_what_was_written_and_vectors_their_bytes() -> None:
    events = [
        [0, 10, 1, 1, "write", 100, 3, 0, 0, 4096, 0],  # asked 4096, wrote 100
        [1, 10, 1, 1, "readv", 300, 3, 0, 100, 300, 0],
    ]
    ops = _ops(_program(events))
    assert [op[7] for op in ops] == [100, 300]  # a: the byte count replayed


def test_a_path_looked_up_from_a_directory_is_replayed_from_it() -> None:
    """The call walked "a/f1" from its cwd: the replay walks that, from that directory."""
    events = [
        [0, 10, 1, 1, "stat", 0, "/srv/data/a/f1", 2, 0, 0],
        [1, 10, 1, 1, "stat", 0, "/srv/data/a/f1", -1, 0, 0],  # absolute: from the root
        [2, 10, 1, 1, "rename", 0, "/srv/data/a/f1", 2, "/srv/data/b/f1", 2, 0, 0],
    ]
    lines = _program(events)
    at = next(i for i, ln in enumerate(lines) if ln.startswith("paths "))
    paths = lines[at + 1 : at + 1 + int(lines[at][6:])]
    ops = _ops(lines)
    assert paths[ops[0][3]] == "a/f1" and paths[ops[0][4]] == "srv/data"
    assert paths[ops[1][3]] == "srv/data/a/f1" and ops[1][4] == -1
    assert (paths[ops[2][5]], paths[ops[2][6]]) == ("b/f1", "srv/data")


def test_the_tracers_own_time_is_kept_apart_from_think_time() -> None:
    events = [[0, 10, 1, 1, "fsync", 0, 3, 0, 1234]]
    t = trace.Trace({}, preopened=[["fd", 0, 1, 3, "/srv/f", 2, 0]], events=events)
    assert _ops(Compiler(t).compile().splitlines())[0][13] == 1234


def test_the_tracers_time_on_events_not_replayed_is_left_out_of_the_next_calls_gap() -> None:
    """A close another descriptor outlives is not replayed: its overhead goes to the
    thread's next op (a paced replay leaves it out of that op's think time)."""
    events = [
        [0, 10, 1, 1, "close", 0, 3, 0, 0, 0, 400],  # not the last: not replayed
        [1, 10, 1, 2, "close", 0, 5, 2, 1, 0, 30],  # another thread
        [2, 10, 1, 1, "close", 0, 4, 1, 1, 0, 100],
    ]
    assert [op[13] for op in _ops(_program(events))] == [30, 500]


def _tail_ns(header: dict[str, Any], events: list[list[Any]]) -> int:
    lines = Compiler(trace.Trace(header, tree=[["d", "/srv"]], events=events)).compile()
    return int(lines.splitlines()[-1].removeprefix("tail_ns "))


@pytest.mark.parametrize(
    ("ended", "tail_us"),
    [("command ended", 40), ("exited", 40), ("duration", 990), ("interrupted by SIGINT", 990)],
)
def test_the_tail_ends_at_the_processes_exit_when_they_ended_the_capture(
    ended: str, tail_us: int
) -> None:
    """The capture notices an exit up to a poll later; the trace's own exit says when the
    service ended. Cut off by the duration or a signal, the service went on to the end."""
    events = [
        [0, 10_000, 1, 1, "stat", 0, "/srv/f", -1, 0, 0],  # ends at 10 us
        [50, 0, 1, 1, "exit", 0, 0, 0, 0, 0, 0],
    ]
    got = _tail_ns({"duration_s": 0.001, "ended": ended}, events)
    assert got == tail_us * 1000


# ---------------------------------------------------------------- the strace fallback

STRACE = """\
3056  1795781301.287321 openat(-100</tmp/st>, "a", 0x80041, 0644) = 3</tmp/st/a> <0.000036>
3056  1795781301.287381 write(3</tmp/st/a>, ""..., 100) = 100 <0.000016>
3056  1795781301.287786 rename("a", "b \\"q\\"") = 0 <0.000018>
3056  1795781301.288007 clone3({flags=0x3d0f00} => {parent_tid=[3057]}, 88) = 3057 <0.000058>
3057  1795781301.288293 openat(-100</tmp/st>, "c", 0x80241, 0666 <unfinished ...>
3056  1795781301.288300 unlink("zz") = -1 ENOENT (No such file or directory) <0.000015>
3057  1795781301.288390 <... openat resumed>) = 3</tmp/st/c> <0.000020>
3056  1795781301.288626 clone(child_stack=NULL, flags=0x1200000|17) = 3058 <0.001040>
3058  1795781301.290339 +++ exited with 0 +++
"""


def test_strace_lines_become_the_tracers_records() -> None:
    from fsarena.capture.strace import Parser

    parser = Parser()
    got = [r for line in STRACE.splitlines() for r in parser.feed(line)]
    names = [(r.name, r.pid, r.tid) for r in got]
    assert names == [
        ("open", 3056, 3056), ("write", 3056, 3056), ("rename", 3056, 3056),
        ("fork", 3056, 3056), ("unlink", 3056, 3056), ("open", 3056, 3057),  # a thread
        ("fork", 3056, 3056), ("exit", 3058, 3058),  # a process of its own
    ]  # fmt: skip
    first = got[0]
    assert first.paths == ("a",) and first.result == 3 and first.duration_ns == 36_000
    assert first.ints[:4] == (-100, 0x80041, 0o644, -1)  # created: strace cannot tell
    assert got[2].paths == ("a", 'b "q"')
    assert got[4].result == -errno.ENOENT
    assert got[5].start_ns == 1795781301288293000  # the call's start, not its resumption
    assert parser.calls == 7  # every call strace stopped the command at
