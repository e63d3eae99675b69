"""ansible-playbook tied to the controller: when `fsarena fleet run` dies, the play dies.

`python -m fsarena.fleet.launcher REAL ARGS...` is what ansible-runner starts as
ansible-playbook (fleet.run puts a shim of that name first on PATH). It asks the
kernel for SIGTERM when its parent (the controller's runner thread) ends (prctl
PR_SET_PDEATHSIG), runs the real ansible-playbook as its child, in its process group,
and passes its exit status on. On SIGTERM, SIGHUP or SIGINT (the controller gone, or
ansible-runner's cancel) it kills the whole group: ansible-playbook and every worker
it forked. Without it, `kill -9` of the controller left ansible-playbook writing to a
closed terminal at full CPU, and then its workers asleep, for good.

Standard library only; nothing of fsarena is imported.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from types import FrameType

PR_SET_PDEATHSIG = 1
ENDS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def _end_group(signum: int, frame: FrameType | None) -> None:
    os.killpg(0, signal.SIGKILL)  # this process too: nothing of the play outlives it


def main() -> None:
    real, args = sys.argv[1], sys.argv[2:]
    parent = os.getppid()
    for s in ENDS:
        signal.signal(s, _end_group)
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the controller died before the request took
        _end_group(signal.SIGTERM, None)
    child = os.fork()
    if child == 0:
        for s in ENDS:
            signal.signal(s, signal.SIG_DFL)
        os.execv(real, [real, *args])
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    sys.exit(os.waitstatus_to_exitcode(status) % 256)


if __name__ == "__main__":
    main()
