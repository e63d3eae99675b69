"""Loopback SSH hosts for the fleet tests: one real sshd per host on its own 127.0.0.x.

Each host gets its own address, port, host key and work directory; one user key
(generated here) logs in as root. Ansible's remote temporary files and async job
files go under TOP (TOP/remote-tmp, TOP/async), not root's home shared by every
test on the machine, so a test can check that nothing of its own was left there.
They all share this machine's kernel, disks and /etc/machine-id: a test with them
checks fsarena's fleet machinery (Ansible, the playbook, fetching, merging,
stopping), not a real fleet's differences.
Nothing listens outside 127.0.0.0/8.

Run by hand to get an inventory for `fsarena fleet run`:
    python tests/integration/test_fleet_hosts.py DIR [COUNT]   (Ctrl-C or kill PID stops them)
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]
SSHD = Path("/usr/sbin/sshd")
PRIVSEP = Path("/run/sshd")  # sshd refuses to start without its privilege separation dir


def _free_port(address: str) -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return int(s.getsockname()[1])


def _keygen(path: Path) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return path.with_suffix(".pub").read_text().strip()


def _wait_listening(address: str, port: int, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(100):
        if proc.poll() is not None:
            raise RuntimeError(f"sshd on {address}:{port} exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex((address, port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"sshd on {address}:{port} did not listen")


def _config(top: Path, name: str, address: str, port: int) -> Path:
    config = top / name / "sshd_config"
    config.write_text(
        f"ListenAddress {address}:{port}\nHostKey {top / name / 'host_key'}\n"
        f"PidFile {top / name / 'sshd.pid'}\nAuthorizedKeysFile {top / 'authorized_keys'}\n"
        "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
        "Subsystem sftp /usr/lib/openssh/sftp-server\n"
    )
    return config


@contextmanager
def loopback_hosts(
    top: Path,
    count: int,
    workroot: Path,
    host_vars: dict[str, str] | None = None,
    pipelining: bool = False,
) -> Iterator[Path]:
    """Start `count` sshd hosts; yield an Ansible inventory for them; stop them after.

    Every host runs this checkout's fsarena unless `host_vars` gives it other inventory
    variables (e.g. {"h1": "fsarena_dir=/empty/dir"}: a host without fsarena).
    pipelining: Ansible sends each module on the SSH connection's stdin rather than
    copying it into the host's temporary directory first, one login per task instead of
    several (two fleet stop tests: 54-63 s against 97-108 s, load 17-24). Off by
    default, as in fsarena's own fleet runs, and where a test checks what the remote
    temporary directory holds (async jobs still go through it either way).
    """
    made_privsep = not PRIVSEP.exists()
    PRIVSEP.mkdir(mode=0o755, exist_ok=True)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        user = _keygen(top / "user_key")
        (top / "authorized_keys").write_text(user + "\n")
        lines, known = ["[fleet]"], []
        for i in range(count):
            name, address = f"h{i + 1}", f"127.0.0.{11 + i}"
            (top / name).mkdir()
            host_pub = _keygen(top / name / "host_key")
            port = _free_port(address)
            config = _config(top, name, address, port)
            procs.append(subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(config)],
                                          stderr=(top / name / "sshd.log").open("wb")))  # fmt: skip
            _wait_listening(address, port, procs[-1])
            known.append(f"[{address}]:{port} {' '.join(host_pub.split()[:2])}")
            workdir = workroot / name / "w"
            more = (host_vars or {}).get(name, "")
            lines.append(f"{name} ansible_host={address} ansible_port={port} "
                         f"fsarena_workdir={workdir} {more}".rstrip())  # fmt: skip
        (top / "known_hosts").write_text("\n".join(known) + "\n")
        lines += [
            "", "[fleet:vars]", "ansible_user=root",
            f"ansible_ssh_private_key_file={top / 'user_key'}",
            f"ansible_ssh_common_args='-o UserKnownHostsFile={top / 'known_hosts'} "
            "-o StrictHostKeyChecking=yes -o ControlMaster=no -o ControlPath=none'",
            "ansible_python_interpreter=/usr/bin/python3",
            f"ansible_remote_tmp={top / 'remote-tmp'}", f"ansible_async_dir={top / 'async'}",
            f"fsarena_dir={CHECKOUT}",
            *(["ansible_pipelining=true"] if pipelining else []),
        ]  # fmt: skip
        inventory = top / "inventory"
        inventory.write_text("\n".join(lines) + "\n")
        yield inventory
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)
        if made_privsep:
            shutil.rmtree(PRIVSEP, ignore_errors=True)


def stop_host(top: Path, name: str) -> None:
    """Make a host unreachable: stop its sshd (new connections are refused)."""
    pid = int((top / name / "sshd.pid").read_text())
    os.kill(pid, 15)


@pytest.mark.skipif(not SSHD.exists(), reason="openssh-server is not installed (setup.sh --dev)")
def test_loopback_hosts_accept_the_generated_key(tmp_path: Path) -> None:
    with loopback_hosts(tmp_path, 2, tmp_path / "work") as inventory:
        text = inventory.read_text()
        port = text.split("ansible_port=")[1].split()[0]
        out = subprocess.run(
            ["ssh", "-i", str(tmp_path / "user_key"), "-p", port,
             "-o", f"UserKnownHostsFile={tmp_path / 'known_hosts'}",
             "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes",
             "root@127.0.0.11", "echo", "hello"],
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        assert out.stdout.strip() == "hello", out.stderr


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # stops the daemons through loopback_hosts' finally


if __name__ == "__main__":
    # A background job ignores SIGINT: SIGTERM (kill PID) stops the hosts the same way.
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    top = Path(sys.argv[1]).resolve()
    top.mkdir(parents=True)
    with loopback_hosts(top, int(sys.argv[2]) if len(sys.argv) > 2 else 3, top / "work") as inv:
        print(f"inventory: {inv}; Ctrl-C stops the hosts", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
