"""agent/session/file: the bytes of a file a session's messages refer to (an image the
user sent, kept once beside the session log), for a client that shows it."""

from __future__ import annotations

import asyncio
import base64

from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.jsonrpc import shown
from agent_lsp.llm.images import media_type_of
from agent_lsp.lsp import wire_images
from agent_lsp.lsp.language_server import AgentLanguageServer
from agent_lsp.store import files


async def session_file(ls: AgentLanguageServer, p: wire_images.SessionFileParams) -> wire_images.SessionFileResult:
    await ls.ready()
    host = ls.host_for_session(p.session_id)
    folder = files.files_dir(host.store.path_of(p.session_id))
    try:
        data = await asyncio.to_thread(files.read, folder, p.file)
    except OSError:
        raise JsonRpcInvalidParams(f"session {p.session_id} has no file {shown(p.file)}") from None
    return wire_images.SessionFileResult(media_type=media_type_of(data) or "application/octet-stream",
                                         data=base64.b64encode(data).decode("ascii"), size=len(data))


REQUESTS = {"agent/session/file": session_file}
