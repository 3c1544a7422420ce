"""Damaged copies of a real session file opened through `agent-lsp acp`, as
the LSP face opens them (tests/lsp/test_lsp_damaged_sessions.py): what can be
read is replayed read-only with a warning naming the file and the line; a
file with nothing readable, and a prompt to a damaged session, get the coded
error naming them; the file is never written."""

from __future__ import annotations

import asyncio
from pathlib import Path

import acp
import pytest

from acp_harness import AcpTestClient, acp_agent
from test_lsp_damaged_sessions import DAMAGED_LINE, FIXTURE, LINES, MID_FILE, SESSION_DAMAGED, UNREADABLE


def _copy(folder: Path, name: str, data: bytes) -> tuple[str, Path]:
    session_id = f"s_damaged_{name}"
    path = folder / f"{session_id}.jsonl"
    path.write_bytes(data.replace(FIXTURE["sessionId"].encode(), session_id.encode(), 1))  # its header names it
    return session_id, path


async def test_damaged_sessions_open_read_only_up_to_the_damage_or_are_refused_by_name(tmp_path: Path):
    workspace, sessions = tmp_path / "ws", tmp_path / "sessions"
    workspace.mkdir()
    client = AcpTestClient()
    async with acp_agent(client, sessions, [{"text": "fine"}]) as conn:
        good = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        (folder,) = {path.parent for path in sessions.rglob(f"{good}.jsonl")}
        chunk = list(LINES)
        chunk[11] = chunk[11][:60] + b"\x00" + chunk[11][60:]  # line 12: a stream chunk, which a load does not read
        for name, data, line in (("garbage", MID_FILE["garbage"], DAMAGED_LINE),
                                 ("chunk", b"\n".join(chunk) + b"\n", 12)):
            session_id, path = _copy(folder, name, data)
            written = path.read_bytes()
            loaded = await asyncio.wait_for(conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[]), 30)
            problem = loaded.field_meta["agent-lsp"]["problem"]
            assert problem.startswith(f"session file {session_id}.jsonl is damaged at line {line}: "), problem
            assert str(tmp_path) not in problem
            # the good part is shown, then the warning
            assert "user_message_chunk" in client.kinds(session_id)
            assert client.text(session_id).endswith(f"agent-lsp: {problem}; showing what comes before it, read-only\n")
            with pytest.raises(acp.RequestError) as refused:
                await conn.prompt(session_id=session_id, prompt=[acp.text_block("go on")])
            assert refused.value.code == SESSION_DAMAGED
            assert refused.value.data == {"sessionId": session_id, "file": f"{session_id}.jsonl", "line": line}
            if name != "chunk":  # (the load of a file whose damage it does not read marks where its seed ends)
                assert path.read_bytes() == written
        for name in ("empty", "bad-header"):
            session_id, path = _copy(folder, name, UNREADABLE[name])
            with pytest.raises(acp.RequestError) as error:
                await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
            assert error.value.code == SESSION_DAMAGED
            assert str(error.value).startswith(f"session file {session_id}.jsonl is damaged at line 1: ")
            assert error.value.data == {"sessionId": session_id, "file": f"{session_id}.jsonl", "line": 1}
            assert str(tmp_path) not in str(error.value)
            assert path.read_bytes() == UNREADABLE[name]
        listed = {info.session_id: info for info in (await conn.list_sessions(cwd=str(workspace))).sessions}
        assert listed["s_damaged_empty"].field_meta["agent-lsp"]["problem"].startswith(
            "session file s_damaged_empty.jsonl is damaged at line 1: ")
        assert listed["s_damaged_chunk"].field_meta["agent-lsp"]["problem"].startswith(
            "session file s_damaged_chunk.jsonl is damaged at line 12: ")  # found by its load, though the scan reads past it
        # the process is fine: the good session answers
        assert (await conn.prompt(session_id=good, prompt=[acp.text_block("hi")])).stop_reason == "end_turn"
