"""The measurement seam is two narrow protocols, and a guest implements only the first."""

from __future__ import annotations

from fsarena.guest.host import GuestExecutor
from fsarena.host.executor import Executor, Host, RealExecutor, Runtime, TaskExecutor


def _methods(protocol: type) -> set[str]:
    return {n for n, v in vars(protocol).items() if callable(v) and not n.startswith("_")}


def test_the_task_seam_and_the_host_plumbing_are_disjoint_and_make_the_executor() -> None:
    tasks, host = _methods(TaskExecutor), _methods(Host)
    assert not tasks & host
    assert {"call", "measure", "drop_caches"} <= tasks
    assert {"create_image", "attach_loop", "start_guest"} <= host
    assert TaskExecutor in Executor.__mro__ and Host in Executor.__mro__
    assert all(hasattr(RealExecutor, m) for m in tasks | host)


def test_a_guest_implements_the_task_seam_and_nothing_of_the_host_plumbing() -> None:
    assert all(hasattr(GuestExecutor, m) for m in _methods(TaskExecutor))
    assert not [m for m in _methods(Host) if hasattr(GuestExecutor, m)]


def test_datasets_are_not_the_seams() -> None:
    """Datasets make themselves (DatasetSpec.materialize); a copy is verified where it is:
    here for the host's executor, as a job inside a guest (the only Runtime of the two)."""
    seam = _methods(TaskExecutor) | _methods(Host)
    assert not seam & {"verify", "generate_dataset", "resolve_dataset", "make_tarball"}
    assert not isinstance(RealExecutor(), Runtime)
    assert issubclass(GuestExecutor, Runtime)
