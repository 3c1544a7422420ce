"""Starting `agent-lsp acp`: without the LSP libraries (pygls and lsprotocol, some 560
attrs classes, are a good part of a start's CPU, and the ACP face never uses them), and
with a clear error when stdin is not a pipe."""

from __future__ import annotations

import subprocess
import sys

from acp_harness import agent_env


def test_the_acp_face_does_not_import_the_lsp_libraries(tmp_path):
    # -X importtime lists every module imported; stdin an empty pipe: the agent serves nothing and exits
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "agent_lsp", "acp"], input="",
                          capture_output=True, text=True, timeout=60, env=agent_env(tmp_path / "sessions"))
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "acp.schema" in imported and "agent_lsp.acp.face" in imported  # it did start the face
    assert not {name for name in imported if name.split(".")[0] in ("pygls", "lsprotocol")}


def test_stdin_that_is_not_a_pipe_is_a_clear_error_not_a_hang(tmp_path):
    with open(tmp_path / "requests.txt", "w+") as file:
        done = subprocess.run([sys.executable, "-m", "agent_lsp", "acp"], stdin=file, capture_output=True, text=True,
                              timeout=60, env=agent_env(tmp_path / "sessions"))
    assert done.returncode == 2
    assert done.stderr.strip() == ("agent-lsp acp: stdin is a file, not a pipe; an ACP client runs this command "
                                   "with pipes (stdin and stdout)")
