"""What a sandboxed command can reach, with the real bubblewrap: the command lines
run_command and the hooks run, started as they start them.

An allowed command writes only in the workspace and the temp folder, sees none of
the user's home but the toolchains (never a secret), has no network unless
allowed, and every escape tried here fails."""

from __future__ import annotations

import fcntl
import os
import pty
import socket
import subprocess
import sys
import termios
import textwrap
from pathlib import Path

import pytest
from sandbox_places import CANARY, Places, make_places, needs_bwrap

from agent_lsp.sandbox import SandboxPolicy, blocked_by_sandbox
from agent_lsp.sandbox.bwrap import BASE_OPTIONS
from agent_lsp.sandbox.seatbelt import seatbelt_argv

pytestmark = needs_bwrap()


@pytest.fixture
def places(tmp_path: Path) -> Places:
    return make_places(tmp_path)


def sandboxed(places: Places, script: str, policy: SandboxPolicy | None = None,
              env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    policy = policy or places.policy()
    placement = policy.place(script)
    assert placement.sandboxed, placement
    argv = placement.wrap(["bash", "-c", script], places.workspace)
    return subprocess.run(argv, cwd=places.workspace, env={**places.env(), **(env_extra or {})}, capture_output=True,
                          text=True, timeout=30, start_new_session=True)


def test_writes_land_only_in_the_workspace_and_the_temp_folder(places: Places):
    done = sandboxed(places, textwrap.dedent(f"""\
        echo ws > in-workspace.txt
        echo tmp > {places.temp}/in-temp.txt
        echo out > {places.outside}/new.txt
        echo more >> {places.outside}/file.txt
        echo home > ~/new-in-home.txt
        echo etc > /etc/agent-lsp-sandbox-test
        exit 0"""))
    assert (places.workspace / "in-workspace.txt").read_text() == "ws\n"
    assert (places.temp / "in-temp.txt").read_text() == "tmp\n"
    assert not (places.outside / "new.txt").exists()
    assert (places.outside / "file.txt").read_text() == "outside\n"
    assert not (places.home / "new-in-home.txt").exists()  # the home is a scratch folder: discarded
    assert not Path("/etc/agent-lsp-sandbox-test").exists()
    assert done.stderr.count("Read-only file system") == 3, done.stderr
    blocked = blocked_by_sandbox(done.stderr, places.policy(), network=False)
    assert blocked is not None and blocked.startswith(f"write to {places.outside}")


def test_the_home_is_hidden_and_secrets_never_show(places: Places):
    script = f"cat {places.canary}; cat ~/.aws/credentials; cat ~/notes.txt; ls -a ~/.ssh; exit 0"
    done = sandboxed(places, script)
    assert CANARY not in done.stdout and "private notes" not in done.stdout
    assert "No such file or directory" in done.stderr
    assert blocked_by_sandbox(done.stderr, places.policy(), network=False) == (
        f"{places.canary} is hidden (the sandbox shows no part of $HOME but the toolchains and shell.readablePaths)")
    # made readable, made writable, or the workspace itself: the secrets still do not show
    for policy in (places.policy(readable=(places.home,)), places.policy(writable=(places.home / ".ssh",)),
                   places.policy(roots=(places.home,))):
        done = sandboxed(places, script, policy)
        assert CANARY not in done.stdout, policy
    assert "private notes" in sandboxed(places, script, places.policy(readable=(places.home,))).stdout


def test_no_network_unless_allowed(places: Places):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    connect = (f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); "
               "print('connected')\"")
    try:
        off = sandboxed(places, connect)
        assert off.returncode != 0 and "connected" not in off.stdout
        on = sandboxed(places, connect, places.policy(network=True))
        assert on.returncode == 0 and on.stdout.strip() == "connected", on.stderr
    finally:
        listener.close()


def test_escapes_fail(places: Places):
    target = places.outside / "file.txt"
    (places.workspace / "link-out").symlink_to(target)  # a link the user (or an earlier command) left
    (places.workspace / "link-secret").symlink_to(places.canary)
    done = sandboxed(places, textwrap.dedent(f"""\
        echo via-link >> link-out
        cat link-secret
        ln -s {places.canary} new-link && cat new-link
        cat /proc/self/root{places.canary} /proc/1/root{places.canary}
        echo via-proc >> /proc/self/root{target}
        echo via-dots >> ../outside/file.txt
        cd .. && echo via-cd >> outside/file.txt; cd {places.workspace}
        ln {target} hard-link && echo via-hard-link >> hard-link
        ln {places.canary} hard-secret && cat hard-secret
        exit 0"""))
    assert target.read_text() == "outside\n", done.stderr
    assert CANARY not in done.stdout
    assert not (places.workspace / "hard-link").exists() and not (places.workspace / "hard-secret").exists()


def test_a_command_cannot_push_keystrokes_into_the_terminal(places: Places):
    """TIOCSTI: a command whose stdin is the user's terminal types into it. The sandbox
    starts the command in a session of its own, which the terminal does not belong to."""
    inject = f"{sys.executable} -c \"import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b'x')\""
    placement = places.policy().place(inject)
    argv = placement.wrap(["bash", "-c", inject], places.workspace)

    def run_on_a_terminal(argv: list[str]) -> int:
        main, terminal = pty.openpty()

        def own_the_terminal() -> None:  # the command's session owns the terminal, as in a shell
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        try:
            return subprocess.run(argv, stdin=terminal, capture_output=True, env=places.env(), timeout=30,
                                  preexec_fn=own_the_terminal).returncode
        finally:
            os.close(main)
            os.close(terminal)

    assert run_on_a_terminal(argv) != 0
    if Path("/proc/sys/dev/tty/legacy_tiocsti").read_text().strip() == "1":  # the attack works here without it
        assert "--new-session" in BASE_OPTIONS
        assert run_on_a_terminal([a for a in argv if a != "--new-session"]) == 0


def test_without_bubblewrap_require_refuses_and_auto_runs_unsandboxed(places: Places):
    path = places.path_without_bwrap()
    refused = places.policy(mode="require", search_path=path, landlock=False).place("ls")
    assert refused.refused is not None and "bubblewrap is not installed: apt install bubblewrap" in refused.refused
    auto = places.policy(search_path=path, landlock=False).place("ls")
    assert not auto.sandboxed and auto.label().startswith("not sandboxed: bubblewrap is not installed")
    assert auto.wrap(["ls"], places.workspace) == ["ls"]
    assert places.policy(mode="off").place("ls").label() == 'not sandboxed: the setting shell.sandbox is "off"'
    exception = places.policy(exceptions=("docker compose",)).place("docker compose up")
    assert not exception.sandboxed and exception.exception and "sandbox exception" in exception.why
    assert places.policy(exceptions=("docker compose",)).place("docker ps").sandboxed
    assert places.policy(mode="off").describe() == 'off (shell.sandbox is "off"): commands run unsandboxed'
    assert places.policy(network=True).describe().endswith(", with network")


def test_the_macos_profile_says_the_same_policy(places: Places):
    """Not run on macOS here: the profile's text only."""
    argv = seatbelt_argv("/usr/bin/sandbox-exec", ["bash", "-c", "true"], writable=[places.workspace],
                         readable=[places.outside], home=places.home, network=False)
    profile = argv[argv.index("-p") + 1]
    params = dict(a[2:].split("=", 1) for a in argv if a.startswith("-D"))
    assert profile.startswith("(version 1)\n(deny default)\n") and argv[-4:] == ["--", "bash", "-c", "true"]
    assert params["W0"] == str(places.workspace) and params["R0"] == str(places.outside)
    assert params["HOME"] == str(places.home)
    assert str(places.home / ".ssh") in params.values() and str(places.home / ".cargo/bin") in params.values()
    lines = profile.splitlines()
    deny_home = lines.index('(deny file-read* (subpath (param "HOME")))')
    secret = next(i for i, line in enumerate(lines) if line.startswith("(deny file-read* file-write* (subpath (param \"S"))
    toolchain = lines.index('(allow file-read* (subpath (param "T0")))')
    assert deny_home < toolchain < secret  # the last matching rule wins: a secret is denied even under a readable path
    assert '(allow file-read* file-write* (subpath (param "W0")))' in lines
    assert "(allow network*)" not in lines
    with_network = seatbelt_argv("/usr/bin/sandbox-exec", ["true"], writable=[], home=places.home, network=True)
    assert "(allow network*)" in with_network[2].splitlines()
    assert str(places.workspace) not in profile  # paths are parameters, never pasted into the text


def test_the_sockets_of_other_programs_are_out_of_reach(places: Places, monkeypatch):
    """A tmux server's or an ssh agent's socket in the temp folder would let a command type
    into the user's shells or sign with their keys; the daemons' sockets live in /run."""
    listeners = []
    for name in ("tmux-0/default", "ssh-abcdef/agent.1"):
        path = places.temp / name
        path.parent.mkdir()
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(path))
        listener.listen(1)
        listeners.append(listener)
    monkeypatch.setenv("SSH_AUTH_SOCK", str(places.temp / "ssh-abcdef/agent.1"))
    connect = (f"{sys.executable} -c \"import socket, sys; s = socket.socket(socket.AF_UNIX); "
               "s.connect(sys.argv[1]); print('connected')\"")
    script = (f"{connect} {places.temp}/tmux-0/default; {connect} \"$SSH_AUTH_SOCK\"; "
              f"{connect} {places.temp}/ssh-abcdef/agent.1; echo \"agent=$SSH_AUTH_SOCK\"; ls -A /run")
    try:
        done = sandboxed(places, script, env_extra={"SSH_AUTH_SOCK": str(places.temp / "ssh-abcdef/agent.1")})
    finally:
        for listener in listeners:
            listener.close()
    assert "connected" not in done.stdout, done.stdout
    assert "agent=\n" in done.stdout
    daemons = {p.name for p in Path("/run").iterdir()} - {"shm", "systemd", "resolvconf", "NetworkManager"}
    assert not daemons & set(done.stdout.split()), done.stdout


def test_toolchains_installed_in_the_home_run_and_their_credentials_stay_hidden(places: Places):
    tool = places.home / ".local/share/pipx/venvs/tool/bin/tool"  # pipx: a link in ~/.local/bin into its venv
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\necho tool-ran\n")
    tool.chmod(0o755)
    (places.home / ".local/bin").mkdir(parents=True)
    (places.home / ".local/bin/tool").symlink_to(tool)
    (places.home / ".cargo/registry").mkdir(parents=True)
    (places.home / ".cargo/registry/index").write_text("crates\n")
    (places.home / ".cargo/credentials.toml").write_text(CANARY + "\n")
    done = sandboxed(places, "~/.local/bin/tool; cat ~/.cargo/registry/index; cat ~/.cargo/credentials.toml; "
                             "echo x > ~/.cargo/registry/index; exit 0")
    assert done.stdout.splitlines() == ["tool-ran", "crates"], done.stderr
    assert "Read-only file system" in done.stderr  # toolchains are read-only
    assert (places.home / ".cargo/registry/index").read_text() == "crates\n"
