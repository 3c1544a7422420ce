"""The fallback where bubblewrap does not work: Landlock and the seccomp filter, on the real
kernel (bubblewrap is taken off the PATH). An allowed command writes only in the workspace
and the temp folder, reads no secret (also when the workspace is the home), has no network
and no Unix socket, and cannot signal a process outside; `shell.landlock = false` turns the
fallback off."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from sandbox_places import CANARY, Places, make_places
from sandbox_turns import server, turn
from tools_harness import call, text_of

from agent_lsp.sandbox import SandboxPolicy, blocked_by_sandbox
from agent_lsp.sandbox.landlock import landlock_abi

ABI, WHY_NOT = landlock_abi()
pytestmark = pytest.mark.skipif(ABI < 1, reason=f"no Landlock here: {WHY_NOT}")


@pytest.fixture
def places(tmp_path: Path) -> Places:
    return make_places(tmp_path)


def policy(places: Places, **overrides) -> SandboxPolicy:
    # the interpreter the tests run under may live in the real home, which the fake home does not list
    return places.policy(search_path=places.path_without_bwrap(), readable=(Path(sys.base_prefix),), **overrides)


def run(places: Places, script: str, policy: SandboxPolicy) -> subprocess.CompletedProcess:
    placement = policy.place(script)
    assert placement.sandboxed and placement.kind == "landlock", placement
    return subprocess.run(placement.wrap(["bash", "-c", script], places.workspace), cwd=places.workspace,
                          env=places.env(), capture_output=True, text=True, timeout=30, start_new_session=True)


def test_writes_land_only_in_the_workspace_and_temp_and_secrets_never_show(places: Places):
    done = run(places, textwrap.dedent(f"""\
        echo ws > in-workspace.txt
        echo tmp > {places.temp}/in-temp.txt
        echo out > {places.outside}/new.txt
        echo home > ~/new-in-home.txt
        cat {places.canary} ~/.aws/credentials ~/notes.txt
        ln {places.outside}/file.txt hard-link
        exit 0"""), policy(places))
    assert (places.workspace / "in-workspace.txt").read_text() == "ws\n"
    assert (places.temp / "in-temp.txt").read_text() == "tmp\n"
    assert not (places.outside / "new.txt").exists() and not (places.home / "new-in-home.txt").exists()
    assert not (places.workspace / "hard-link").exists()
    assert CANARY not in done.stdout and "private notes" not in done.stdout
    said = done.stderr.splitlines()
    assert blocked_by_sandbox(said[0], policy(places), network=False).startswith(f"write to {places.outside}")
    assert blocked_by_sandbox("\n".join(said[2:]), policy(places), network=False) == (
        f"{places.canary} is hidden (the sandbox shows no part of $HOME but the toolchains and shell.readablePaths)")

    # the workspace is the home: all of it but the secrets
    done = run(places, f"cat ~/notes.txt; cat {places.canary}; echo x > ~/.ssh/new; exit 0",
               policy(places, roots=(places.home,)))
    assert "private notes" in done.stdout and CANARY not in done.stdout
    assert not (places.home / ".ssh" / "new").exists()


def test_no_network_no_unix_socket_no_signal_outside(places: Places):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    probe = textwrap.dedent(f"""\
        import os, socket
        for family, address in ((socket.AF_INET, ("127.0.0.1", {port})), (socket.AF_UNIX, "/nothing")):
            try:
                socket.socket(family).connect(address); print("connected")
            except OSError as error:
                print(family.name, error.strerror)
        a, b = socket.socketpair(); a.sendall(b"x"); print("socketpair", b.recv(1).decode())
        try:
            os.kill({os.getpid()}, 0); print("signalled")
        except OSError as error:
            print("signal", error.strerror)
        """)
    (places.workspace / "probe.py").write_text(probe)
    try:
        done = run(places, f"{sys.executable} probe.py", policy(places))
        signal = "signal Operation not permitted" if ABI >= 6 else "signalled"  # scopes came with ABI 6 (Linux 6.12)
        assert done.stdout.splitlines() == ["AF_INET Operation not permitted", "AF_UNIX Operation not permitted",
                                            "socketpair x", signal], done
        with_network = run(places, f"{sys.executable} probe.py", policy(places, network=True))
        assert with_network.stdout.splitlines()[0] == "connected", with_network
    finally:
        listener.close()


def test_it_is_said_plainly_and_can_be_turned_off(places: Places):
    landlocked = policy(places)
    assert landlocked.place("ls").label() == "sandboxed (Landlock), no network"
    assert landlocked.describe().startswith(f"Landlock (ABI {ABI}) and the seccomp filter, weaker than bubblewrap")
    assert "bubblewrap is not installed" in landlocked.describe()
    with_list = policy(places, allowed_domains=("pypi.org",)).place("ls")
    assert with_list.label() == "sandboxed (Landlock), no network (shell.allowedDomains needs bubblewrap)"
    off = policy(places, landlock=False).place("ls")
    assert not off.sandboxed and off.why.startswith("bubblewrap is not installed")


async def test_through_the_server_commands_ask_nothing_and_say_landlock(places: Places):
    (places.workspace / "notes.md").write_text("notes\n")
    async with server(places, PATH=places.path_without_bwrap()) as editor:
        steps = ["cat notes.md", "echo made > made.txt", f"echo more >> {places.outside}/file.txt"]
        _, (read, made, outside) = await turn(editor, [call("run_command", command=c) for c in steps])
        assert editor.permission_requests == []
        assert "notes\n[sandboxed (Landlock), no network]\n[exit code 0]" in text_of(read)
        assert read["meta"]["sandbox"] == {"sandboxed": True, "network": False, "kind": "landlock"}
        assert (places.workspace / "made.txt").read_text() == "made\n"
        assert f"[blocked by the sandbox: write to {places.outside}/file.txt" in text_of(outside)
        assert (places.outside / "file.txt").read_text() == "outside\n"
        # the hook before each command ran in it too
        assert (places.workspace / "hook-ran").exists() and not (places.outside / "hook-escaped").exists()
