"""Benchmark of Ctrl-C on a fleet run: from SIGINT to every host stopped and clean.

Usage: python bench/fleet_ctrl_c.py INVENTORY WORKROOT [--after 8] [RUN OPTIONS...]

Starts `fsarena fleet run -i INVENTORY --fs ext4,xfs --scale 0.01 -n 2` (or the run
options given), waits until every host's plan has started plus --after seconds, sends
SIGINT, and measures until fsarena exits. Then checks that nothing under WORKROOT
(the hosts' work directories) is still mounted, attached to a loop device, or run by
a process. Prints the wall time, fsarena's own figure for it, and what was left.
For loopback hosts: `python tests/integration/test_fleet_hosts.py DIR 3` gives the
inventory, and DIR/work is WORKROOT.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def leftovers(root: Path) -> list[str]:
    """Mounts, loop devices and processes that refer to the work root."""
    found = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()
             if str(root) in line.split()[1]]  # fmt: skip
    out = subprocess.run(["losetup", "-J", "-l"], capture_output=True, text=True, check=False)
    for dev in json.loads(out.stdout or "{}").get("loopdevices", []):
        if str(root) in (dev.get("back-file") or ""):
            found.append(dev["name"])
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True, check=True)
    found += [line.strip() for line in ps.stdout.splitlines() if f"--workdir {root}" in line]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inventory", type=Path)
    parser.add_argument("workroot", type=Path)
    parser.add_argument("--after", type=float, default=8.0)
    args, run_options = parser.parse_known_args()
    run_options = run_options or ["--fs", "ext4,xfs", "--scale", "0.01", "-n", "2"]
    hosts = len(re.findall(r"^\S+ ansible_host=", args.inventory.read_text(), re.M))
    results = tempfile.mkdtemp(prefix="fsarena-bench-ctrl-c-")
    proc = subprocess.Popen(
        [sys.executable, "-m", "fsarena", "fleet", "run", "-i", str(args.inventory),
         *run_options, "--allow-same-machine", "--results-dir", results],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        # A shell's background job ignores SIGINT, and a child inherits that: undo it.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    assert proc.stderr is not None
    started = 0
    for line in proc.stderr:
        started += "run the plan: started" in line
        if started == hosts:
            break
    time.sleep(args.after)
    proc.send_signal(signal.SIGINT)
    sent = time.monotonic()
    rest = proc.stderr.read()
    code = proc.wait()
    took = time.monotonic() - sent
    said = re.search(r"cleaned up ([0-9.]+) s after the interrupt", rest)
    left = leftovers(args.workroot.resolve())
    shutil.rmtree(results)
    print(f"{hosts} hosts: SIGINT to exit {took:.1f} s (fsarena says "
          f"{said.group(1) if said else 'nothing'} s), exit code {code}; "
          f"left behind: {', '.join(left) or 'nothing'}")  # fmt: skip


if __name__ == "__main__":
    main()
