"""A window reaching an agent host over the network, as from another machine:
`agent-lsp daemon --listen` behind a real SSH tunnel (`ssh -L` to a local
sshd), the window's connector started with `--connect` and the host's token.
A connection without the token is refused, loopback included."""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lsp_harness import running_server

SSHD = shutil.which("sshd") or ("/usr/sbin/sshd" if os.path.exists("/usr/sbin/sshd") else None)
SSH = shutil.which("ssh")
TOKEN = "a-token-only-this-test-knows"

pytestmark = pytest.mark.skipif(not (SSHD and SSH and shutil.which("ssh-keygen") and os.geteuid() == 0),
                                reason="needs OpenSSH's sshd, ssh and ssh-keygen, run as root (CI installs them)")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_port(port: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}")


@pytest.fixture
def tunnel(tmp_path):
    """A host listening on a loopback port, and an SSH tunnel to it from another
    local port (what `ssh -L` from a laptop to the machine with the code gives)."""
    keys = tmp_path / "ssh"
    keys.mkdir(mode=0o700)
    for name in ("host_key", "user_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / name)], check=True)
    (keys / "authorized_keys").write_text((keys / "user_key.pub").read_text())
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation directory
    ssh_port, host_port, local_port = free_port(), free_port(), free_port()
    (keys / "sshd_config").write_text(
        f"Port {ssh_port}\nListenAddress 127.0.0.1\nHostKey {keys / 'host_key'}\n"
        f"AuthorizedKeysFile {keys / 'authorized_keys'}\nPidFile {keys / 'sshd.pid'}\nStrictModes no\n"
        "PermitRootLogin yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        "AllowTcpForwarding yes\n")
    sshd = subprocess.Popen([SSHD, "-D", "-e", "-f", str(keys / "sshd_config")], stderr=subprocess.DEVNULL)
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    env = dict(os.environ, AGENT_LSP_HOST_TOKEN=TOKEN, AGENT_LSP_HOST_SOCKET=str(run / "host.sock"))
    host = subprocess.Popen([sys.executable, "-m", "agent_lsp", "daemon", "--listen", f"127.0.0.1:{host_port}"],
                            env=env, stderr=subprocess.PIPE)
    forward = None
    try:
        wait_port(ssh_port)
        wait_port(host_port)
        forward = subprocess.Popen(
            [SSH, "-N", "-L", f"{local_port}:127.0.0.1:{host_port}", "-p", str(ssh_port), "-i", str(keys / "user_key"),
             "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes",
             "-o", "ExitOnForwardFailure=yes", f"{getpass.getuser()}@127.0.0.1"], stderr=subprocess.DEVNULL)
        wait_port(local_port)
        yield local_port, host
    finally:
        for proc in (forward, host, sshd):
            if proc is not None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(10)


async def test_a_window_works_through_an_ssh_tunnel_with_the_token(tmp_path, tunnel):
    local_port, host = tunnel
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = {"AGENT_LSP_HOST_TOKEN": TOKEN, "AGENT_LSP_HOST_SOCKET": str(tmp_path / "unused" / "host.sock")}
    command = [sys.executable, "-m", "agent_lsp", "--connect", f"127.0.0.1:{local_port}"]
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "sessions", script=[{"text": "over ssh"}],
                              env=env, command=command) as window:
        sid = (await window.request("agent/followup", {"content": "hi"}))["sessionId"]
        await window.wait_idle(sid)
        assert window.streamed_text(sid) == "over ssh"
    assert host.poll() is None  # the host stays for the next window
    assert not (tmp_path / "unused").exists()  # --connect never starts a local host


def test_a_network_connection_without_the_right_token_is_refused(tmp_path, tunnel):
    local_port, _ = tunnel
    for token in ("", "not-the-token"):
        env = dict(os.environ, AGENT_LSP_HOST_TOKEN=token)
        result = subprocess.run([sys.executable, "-m", "agent_lsp", "--connect", f"127.0.0.1:{local_port}"],
                                input=b"", capture_output=True, env=env, timeout=30)
        assert result.returncode in (1, 2) and b"Traceback" not in result.stderr
        assert b"token" in result.stderr
        assert TOKEN.encode() not in result.stderr
