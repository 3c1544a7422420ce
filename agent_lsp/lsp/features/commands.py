"""`workspace/executeCommand` for editors without a plugin: agentLsp.followup |
steer | cancel | newSession. The answer of a turn a command started is shown
with `window/showMessage` (`agent_lsp.lsp.relay`)."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.lsp import capabilities
from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.language_server import AgentLanguageServer
from agent_lsp.lsp.messages import message, message_ref
from agent_lsp.lsp.rpc import parse
from agent_lsp.service import ImageProblem


COMMAND_TURN_DELAY_S = 0.05


def register(server: AgentLanguageServer) -> None:
    @server.command(capabilities.FOLLOWUP)
    async def cmd_followup(ls: AgentLanguageServer, *args: Any) -> dict:
        p = _command_args(args)
        await ls.ready()
        # The turn starts once the answer is out: Emacs 28's jsonrpc leaves messages that arrive
        # in the same read as the answer to its synchronous executeCommand unread until more
        # output comes, so a turn whose first output raced the answer could wait forever on an
        # applyEdit the editor never saw.
        try:
            queued = await ls.service.followup(message(p.content, p.context), session_id=p.session_id or None,
                                               workspace_uri=p.workspace_uri, use_current=True, mentions=False,
                                               after_s=COMMAND_TURN_DELAY_S)
        except ImageProblem as problem:  # as agent/followup answers it: nothing queued
            raise JsonRpcInvalidParams(str(problem)) from None
        ls.command_sessions.add(queued.session_id)
        return wire.wire_dump(message_ref(queued))

    @server.command(capabilities.STEER)
    async def cmd_steer(ls: AgentLanguageServer, *args: Any) -> dict:
        p = _command_args(args)
        await ls.ready()
        try:
            queued = await ls.service.steer(message(p.content, p.context), session_id=p.session_id or None,
                                            workspace_uri=p.workspace_uri)
        except ImageProblem as problem:
            raise JsonRpcInvalidParams(str(problem)) from None
        ls.command_sessions.add(queued.session_id)
        return wire.wire_dump(message_ref(queued))

    @server.command(capabilities.CANCEL)
    async def cmd_cancel(ls: AgentLanguageServer, *args: Any) -> dict:
        session_id, keep_inbox, workspace_uri = None, False, None
        if args and isinstance(args[0], str):
            session_id = args[0]
        elif args and isinstance(args[0], dict):
            session_id = args[0].get("sessionId")
            keep_inbox = bool(args[0].get("keepInbox", False))
            workspace_uri = args[0].get("workspaceUri")
        ls.service.cancel(session_id or None, workspace_uri=workspace_uri, keep_inbox=keep_inbox)
        return {}

    @server.command(capabilities.NEW_SESSION)
    async def cmd_new_session(ls: AgentLanguageServer, *args: Any) -> dict:
        options = args[0] if args and isinstance(args[0], dict) else {}
        p = parse(wire.SessionNewParams, options)
        await ls.ready()
        agent = ls.host_for_uri(p.workspace_uri).new_session(title=p.title)
        return wire.wire_dump(wire.SessionRef(session_id=agent.session_id))


def _command_args(args: tuple[Any, ...]) -> wire.FollowupCommandArgs:
    if len(args) != 1:
        raise JsonRpcInvalidParams("arguments: expected one argument, the message text or {content, sessionId?, context?}")
    value = args[0]
    if isinstance(value, str):
        value = {"content": value}
    return parse(wire.FollowupCommandArgs, value)
