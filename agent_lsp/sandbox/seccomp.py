"""The sandbox's seccomp filter: no new Unix sockets, no io_uring (Linux).

Inside the sandbox, `socket(AF_UNIX, …)` and the three io_uring calls fail
with EPERM. A Unix socket the sandbox still shows (a read-only mount does not
stop a `connect`) is then out of reach: a command cannot talk to a daemon
through a socket somewhere under /var or in the workspace's parent folders.
`socketpair` stays (what a command uses between its own processes), and so
does every other socket family: without network there is only a loopback.
io_uring is refused because its operations are not seen by seccomp at all.
Calls of another ABI are refused too: x32 calls on x86-64, and on x86-64 the
32-bit `socketcall` (so a 32-bit program has no sockets); a program of any
other foreign ABI is killed.

The filter is a classic BPF program of about twenty instructions, written by
`build_filter` below. No library: the Python bindings of libseccomp are not
on PyPI as maintained wheels (pyseccomp's last release is from 2021; the
official bindings ship only with distributions), and the program is small
enough to read whole. bubblewrap loads it (`--seccomp FD`, after its own
setup, so bubblewrap itself is not filtered); with a network allow list the
in-sandbox bridge loads it into the command's process instead (`bridge.py`),
because the bridge itself needs a Unix socket to reach the proxy.
"""

from __future__ import annotations

import functools
import os
import platform
import struct

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
_NR, _ARCH, _ARG0 = 0, 4, 16
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
RET_ALLOW, RET_KILL_PROCESS, RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
EPERM = 1
AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
IO_URING = (425, 426, 427)  # io_uring_setup, io_uring_enter, io_uring_register: the same number everywhere

# machine: (AUDIT_ARCH_*, socket's number, x32-style bit to refuse or 0)
ARCHES = {
    "x86_64": (0xC000003E, 41, 0x40000000),
    "aarch64": (0xC00000B7, 198, 0),
    "riscv64": (0xC00000F3, 198, 0),
}
AUDIT_ARCH_I386, I386_SOCKETCALL, I386_SOCKET = 0x40000003, 102, 359


class _Program:
    """Instructions with symbolic jump targets, resolved at the end."""

    def __init__(self) -> None:
        self.code: list[tuple[int, object, object, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def load(self, offset: int) -> None:
        self.code.append((_LD_W_ABS, 0, 0, offset))

    def jump(self, op: int, k: int, yes: str | int = 0, no: str | int = 0) -> None:
        self.code.append((op, yes, no, k))

    def ret(self, value: int) -> None:
        self.code.append((_RET_K, 0, 0, value))

    def bytes(self) -> bytes:
        out = b""
        for at, (op, yes, no, k) in enumerate(self.code):
            jt = self.labels[yes] - at - 1 if isinstance(yes, str) else yes
            jf = self.labels[no] - at - 1 if isinstance(no, str) else no
            assert 0 <= jt < 256 and 0 <= jf < 256, "jump out of range"
            out += struct.pack("=HBBI", op, jt, jf, k)
        return out


def build_filter(machine: str, *, allow_unix: bool = False, deny_inet: bool = False) -> bytes | None:
    """The program for `machine` (platform.machine()), or None where we have none.
    `deny_inet`: no IPv4 or IPv6 socket either (the Landlock sandbox's "no network")."""
    if machine not in ARCHES:
        return None
    arch, socket_nr, x32_bit = ARCHES[machine]
    refused = ([] if allow_unix else [AF_UNIX]) + ([AF_INET, AF_INET6] if deny_inet else [])
    p = _Program()
    p.load(_ARCH)
    p.jump(_JEQ_K, arch, 0, "foreign")
    p.load(_NR)
    if x32_bit:
        p.jump(_JGE_K, x32_bit, "refuse", 0)
    for nr in IO_URING:
        p.jump(_JEQ_K, nr, "refuse", 0)
    if refused:
        p.jump(_JEQ_K, socket_nr, "socket", 0)
    p.ret(RET_ALLOW)
    p.label("socket")
    p.load(_ARG0)  # the family: an int, the low half of args[0] (little-endian machines only above)
    for family in refused:
        p.jump(_JEQ_K, family, "refuse", 0)
    p.ret(RET_ALLOW)
    p.label("foreign")
    if machine == "x86_64":
        p.jump(_JEQ_K, AUDIT_ARCH_I386, 0, "kill")
        p.load(_NR)
        for nr in (*IO_URING, I386_SOCKETCALL):
            p.jump(_JEQ_K, nr, "refuse", 0)
        if refused:
            p.jump(_JEQ_K, I386_SOCKET, "socket32", 0)
        p.ret(RET_ALLOW)
        p.label("socket32")  # BPF jumps only forward: the same check again
        p.load(_ARG0)
        for family in refused:
            p.jump(_JEQ_K, family, "refuse", 0)
        p.ret(RET_ALLOW)
    p.label("kill")
    p.ret(RET_KILL_PROCESS)
    p.label("refuse")
    p.ret(RET_ERRNO | EPERM)
    return p.bytes()


def native_filter(allow_unix: bool = False, deny_inet: bool = False) -> bytes | None:
    return build_filter(platform.machine(), allow_unix=allow_unix, deny_inet=deny_inet)


@functools.lru_cache(maxsize=4)
def _sealed_fd(program: bytes) -> int:
    import fcntl  # Linux only, like the rest of this module's use

    fd = os.memfd_create("agent-lsp-seccomp", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.write(fd, program)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
    return fd


def filter_path(program: bytes) -> str:
    """A path a child of this process opens to read `program` from its start: a
    sealed memory file of ours (nothing can change it), through /proc."""
    return f"/proc/{os.getpid()}/fd/{_sealed_fd(program)}"
