"""The sandbox the agent's commands run in (see docs/sandbox.md).

    policy = SandboxPolicy(mode="auto", writable=(workspace,), network=False)
    placement = policy.place("pytest -q")      # where one command runs, and why
    argv = placement.wrap(["bash", "-c", "pytest -q"], cwd=workspace)

- `policy.py`: the policy (settings in, one `Placement` per command out);
- `paths.py`: which parts of $HOME a sandboxed command sees, and which never;
- `detect.py`: which sandbox works here (asked once per process);
- `bwrap.py`: bubblewrap's command line on Linux;
- `seccomp.py`: the seccomp filter (no Unix sockets, no io_uring), a small BPF program;
- `domains.py`, `proxy.py`, `bridge.py`: the network allow list: the hosts, the
  server's HTTP proxy, and the bridge to it inside the sandbox;
- `landlock.py`: Landlock and the filter where bubblewrap does not work;
- `seatbelt.py`: the `sandbox-exec` profile on macOS (generated, not tested on macOS);
- `blocked.py`: a failure the sandbox caused, in words.

A leaf: it imports nothing of ours, so the tools (run_command), the hooks and
the permission policy all use the same one.
"""

from agent_lsp.sandbox.blocked import blocked_by_sandbox
from agent_lsp.sandbox.detect import SandboxAvailability, sandbox_availability
from agent_lsp.sandbox.policy import Placement, SandboxMode, SandboxPolicy

__all__ = ["Placement", "SandboxAvailability", "SandboxMode", "SandboxPolicy", "blocked_by_sandbox",
           "sandbox_availability"]
