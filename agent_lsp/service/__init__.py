"""The application service: what happens when a request arrives or a turn starts,
once for both faces.

The LSP features (`agent_lsp.lsp.features`) and the ACP face (`agent_lsp.acp`)
parse their protocol's params, call one method of `AgentService` per
operation, and write its answer in their protocol. The rules in between live
here: a followup's content, context items and `@server:uri` attachments, the
capability files read again when a turn starts, steering, cancelling, the
queue, the pending hunks of review mode. The service reaches the folders and
sessions of a face through `SessionDirectory`, and imports no face, no pygls,
lsprotocol or ACP library.
"""

from agent_lsp.service.agent_service import AgentService, Queued
from agent_lsp.service.directory import SessionDirectory
from agent_lsp.service.images import ImageProblem
from agent_lsp.service.messages import Message

__all__ = ["AgentService", "ImageProblem", "Message", "Queued", "SessionDirectory"]
