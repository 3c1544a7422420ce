"""The network allow list and the seccomp filter, with the real bubblewrap.

With `shell.allowedDomains` a sandboxed command still has no network of its own:
it reaches the allowed hosts through the server's proxy (HTTP_PROXY/HTTPS_PROXY),
and any other host is refused with a message that names it, in the command's
output and in the tool result the model reads. Inside the sandbox no program can
make a Unix socket (so a daemon's socket the sandbox shows is out of reach) or
use io_uring."""

from __future__ import annotations

import http.server
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest
from sandbox_places import Places, make_places, needs_bwrap
from sandbox_turns import server, turn
from tools_harness import call, text_of

from agent_lsp.sandbox import SandboxAvailability, SandboxPolicy, sandbox_availability
from agent_lsp.sandbox.proxy import local_refusal

pytestmark = needs_bwrap()

# An allowed "remote" host: a second loopback address of the host (the sandbox's own loopback is
# 127.0.0.1, and commands reach it without the proxy, so a server there would prove nothing).
HOST = "127.0.0.2"
FETCH = textwrap.dedent("""\
    import socket, sys, urllib.request, urllib.error
    for url in sys.argv[1:]:
        try:
            print(url, urllib.request.urlopen(url, timeout=10).read().decode().strip())
        except urllib.error.HTTPError as error:
            print(url, error.code, error.read().decode().strip())
        except OSError as error:
            print(url, "failed:", error)
    try:
        socket.create_connection(("{host}", int(sys.argv[1].rsplit(":", 1)[1].strip("/"))), timeout=5)
        print("direct: connected")
    except OSError:
        print("direct: refused")
    """)


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        body = b"hello from the allowed host\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def places(tmp_path: Path) -> Places:
    return make_places(tmp_path)


@pytest.fixture
def allowed_server():
    httpd = http.server.ThreadingHTTPServer((HOST, 0), Hello)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://{HOST}:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def run(places: Places, policy: SandboxPolicy, script: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    placement = policy.place(script)
    assert placement.sandboxed and placement.seccomp, placement
    started = time.monotonic()
    argv = placement.wrap(["bash", "-c", script], places.workspace)
    done = subprocess.run(argv, cwd=places.workspace, env=places.env(), capture_output=True, text=True, timeout=30,
                          start_new_session=True)
    return done, placement.refused_hosts(started)


def test_allowed_domains_are_reached_through_the_proxy_and_others_are_refused(places: Places, allowed_server: str):
    (places.workspace / "fetch.py").write_text(FETCH.replace("{host}", HOST))
    script = f"{sys.executable} fetch.py {allowed_server} http://example.org/ https://example.org/"
    policy = places.policy(allowed_domains=(HOST,))
    assert policy.place("x").label() == f"sandboxed, network only to {HOST}"
    done, refused = run(places, policy, script)
    lines = done.stdout.splitlines()
    assert lines[0] == f"{allowed_server} hello from the allowed host", done
    assert lines[1] == "http://example.org/ 403 blocked by the sandbox: example.org is not in shell.allowedDomains"
    assert lines[2].startswith("https://example.org/ failed:") and "403" in lines[2]
    assert lines[3] == "direct: refused"  # only through the proxy: the sandbox has no network of its own
    assert refused == ["example.org"]

    # without the allow list: nothing at all
    done, refused = run(places, places.policy(), script)
    assert "hello" not in done.stdout and refused == []


async def test_the_model_reads_which_host_the_sandbox_refused(places: Places, allowed_server: str):
    (places.workspace / "fetch.py").write_text(FETCH.replace("{host}", HOST))
    async with server(places) as editor:
        command = f"{sys.executable} fetch.py {allowed_server} https://example.org/"
        _, (result,) = await turn(editor, [call("run_command", command=command)],
                                  shell={"allowedDomains": [HOST, "*.example.net"]})
        assert editor.permission_requests == []  # the user chose those hosts: no question
        text = text_of(result)
        assert "hello from the allowed host" in text
        assert f"[sandboxed, network only to {HOST}, *.example.net]" in text
        assert ("[blocked by the sandbox: network access to example.org: not in shell.allowedDomains, which only "
                "the user can change.") in text
        sandbox = result["meta"]["sandbox"]
        assert sandbox["allowedDomains"] == [HOST, "*.example.net"] and sandbox["refusedHosts"] == ["example.org"]


def test_no_unix_socket_and_no_io_uring_inside(places: Places):
    daemon = places.outside / "daemon.sock"  # a daemon's socket the sandbox shows (read-only does not stop connect)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(daemon))
    listener.listen(1)
    probe = textwrap.dedent(f"""\
        import ctypes, os, socket
        a, b = socket.socketpair(); a.sendall(b"x"); print("socketpair", b.recv(1).decode())
        try:
            s = socket.socket(socket.AF_UNIX); s.connect("{daemon}"); print("connected")
        except OSError as error:
            print("unix:", error.strerror)
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        print("io_uring:", libc.syscall(425, 1, None) == -1 and os.strerror(ctypes.get_errno()))
        """)
    (places.workspace / "probe.py").write_text(probe)
    script = f"{sys.executable} probe.py"
    try:
        for policy in (places.policy(readable=(places.outside,)),
                       places.policy(readable=(places.outside,), allowed_domains=("example.org",))):
            done, _ = run(places, policy, script)
            assert done.stdout.splitlines() == ["socketpair x", "unix: Operation not permitted",
                                                "io_uring: Operation not permitted"], done
        done, _ = run(places, places.policy(readable=(places.outside,), allow_unix_sockets=True), script)
        assert "connected" in done.stdout.splitlines(), done
    finally:
        listener.close()


def test_config_show_says_the_filter_is_on():
    assert sandbox_availability().describe().endswith(", seccomp filter on")
    assert SandboxPolicy(allowed_domains=("pypi.org",)).describe().endswith(
        "network only to pypi.org, through the sandbox's proxy")


def test_a_refused_host_is_shown_without_control_characters(places: Places):
    sneaky = textwrap.dedent("""\
        import os, socket
        host, port = os.environ["HTTPS_PROXY"].rsplit("/", 1)[1].split(":")
        s = socket.create_connection((host, int(port)))
        s.sendall(b"CONNECT evil\\x1b]0;owned\\x07.example:443 HTTP/1.1\\r\\n\\r\\n")
        print(s.recv(1000).split(b"\\r\\n")[0].decode())
        """)
    (places.workspace / "sneaky.py").write_text(sneaky)
    done, refused = run(places, places.policy(allowed_domains=("pypi.org",)), f"{sys.executable} sneaky.py")
    assert done.stdout.strip() == "HTTP/1.1 403 Forbidden", done
    assert refused == ["evil?]0?owned?.example"]


def test_cancel_ends_a_command_with_an_allow_list_and_everything_it_started(places: Places):
    placement = places.policy(allowed_domains=("pypi.org",)).place("sleep")
    argv = placement.wrap(["bash", "-c", "sleep 61.5 & sleep 62.5"], places.workspace)
    proc = subprocess.Popen(argv, cwd=places.workspace, env=places.env(), start_new_session=True)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(sleeping()) < 2:
        time.sleep(0.02)
    assert len(sleeping()) == 2
    os.killpg(proc.pid, signal.SIGKILL)  # what cancel does
    proc.wait(timeout=10)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and sleeping():
        time.sleep(0.02)
    assert sleeping() == []


def sleeping() -> list[int]:
    return [p.pid for p in psutil.process_iter(["cmdline", "status"])
            if p.info["cmdline"] in (["sleep", "61.5"], ["sleep", "62.5"]) and p.info["status"] != psutil.STATUS_ZOMBIE]


def test_a_name_that_leads_back_into_the_machine_is_refused():
    """DNS the user does not control (a wildcard's subdomain) must not lead a command to this
    machine's own services or to a cloud's metadata service."""
    allowed = ("*.example.net", "dev.internal", "127.0.0.2")
    assert local_refusal("a.example.net", ["93.184.215.14"], allowed) is None
    assert local_refusal("a.example.net", ["127.0.0.1"], allowed) == (
        "a.example.net resolves to this machine (127.0.0.1); allow it by its exact name to reach it")
    assert local_refusal("a.example.net", ["::1"], allowed).startswith("a.example.net resolves to this machine")
    assert local_refusal("dev.internal", ["127.0.0.1"], allowed) is None  # named exactly: the user meant it
    assert local_refusal("dev.internal", ["169.254.169.254"], allowed) == (
        "dev.internal resolves to a link-local address (169.254.169.254)")
    assert local_refusal("127.0.0.2", ["127.0.0.2"], allowed) is None


def test_the_allow_list_is_claimed_only_where_bubblewrap_runs_the_command():
    seatbelt = SandboxAvailability("seatbelt", "/usr/bin/sandbox-exec")  # macOS: its profile has no proxy
    placement = SandboxPolicy(allowed_domains=("pypi.org",), availability=lambda path: seatbelt).place("pip install x")
    assert placement.label() == "sandboxed, no network (shell.allowedDomains needs bubblewrap)"
    assert placement.domains == () and placement.quiet
