"""Inside a User-Mode Linux guest, max RSS is the command's, as GNU time in the guest says.

The guest's agent is a Python process like fsarena on the host; it starts timed
commands through the same launcher (fsarena-timeit, found beside the host's
interpreter, which the guest sees through hostfs). Checked two ways: GNU time
measuring the very execution fsarena measures, and against the agent's own
memory (a tiny command's max RSS must be far below it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fsarena.filesystems.drivers import choose
from fsarena.measure.collect import Command
from tests.integration.conftest import leftovers

pytestmark = pytest.mark.skipif(
    not choose("jfs@uml").available, reason="needs user-mode-linux (scripts/setup.sh)"
)

FIND = ("find", "/usr/lib/python3", "-name", "*.py")


def test_max_rss_in_a_uml_guest_is_the_commands(workdir: Path) -> None:
    from fsarena.guest.host import boot
    from fsarena.host.executor import GuestSpec, RealExecutor

    host = RealExecutor()
    image = str(workdir / "target.img")
    host.create_image(image, 64 << 20)
    guest = boot(GuestSpec("uml", image, str(workdir / "run"), str(workdir)), host)
    try:
        # Inside the guest the host's root, /tmp included, is read-only; the work
        # directory is the agent's writable scratch.
        out = str(workdir / "gnu-time.out")
        argv = ("/usr/bin/time", "-f", "%M %R", "-o", out, *FIND)
        timed = guest.measure([Command(argv)], None, 300)
        ours, theirs = timed.measurement, [int(x) for x in guest.read_text(out).split()[-2:]]
        # GNU time's own faults, to take out of fsarena's figure: GNU time around `true`.
        alone = guest.measure([Command((*argv[:5], "true"))], None, 60).measurement
        own_faults = alone.minor_faults - int(guest.read_text(out).split()[-1])
        tiny = guest.measure([Command(("true",))], None, 60).measurement
        agent_kib = int(guest.output(("ps", "-o", "rss=", "-p", "1")).split()[0])
    finally:
        guest.close()
    assert ours.exit_code == 0, timed.stderr
    assert ours.max_rss_kib is not None, "the guest did not use the launcher"
    assert abs(ours.max_rss_kib - theirs[0]) <= max(0.05 * theirs[0], 256), (ours, theirs)
    # GNU time's own process is inside fsarena's figure: take it out (a tick's worth of
    # faults, 30, for the dynamic loader's variation between two runs).
    command_faults = ours.minor_faults - own_faults
    assert abs(command_faults - theirs[1]) <= max(0.05 * theirs[1], 30), (ours, theirs, own_faults)
    assert tiny.max_rss_kib is not None and tiny.max_rss_kib * 4 < agent_kib, (tiny, agent_kib)
    assert not leftovers(workdir)
