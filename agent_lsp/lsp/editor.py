"""The Editor port (agent/ports.py) over LSP: the editor owns the buffers.

- apply_edit -> `workspace/applyEdit`: versioned TextDocumentEdits (positions
  converted from code points to the negotiated encoding, UTF-16 by default),
  Create/Rename/DeleteFile when the client supports resource operations; a
  client without `documentChanges` gets the plain `changes` map. For a
  client that declared `saveDocuments` the params carry the folder's
  effective `edits.review` (`agentLsp.review`).
- ask_permission -> `agent/permission` when the client declared
  `experimental.agentLsp.permissions`, else `window/showMessageRequest`.
  No answer, an error or a timeout is "deny".
- elicit (an MCP server's question) -> `agent/elicit` when the client declared
  `experimental.agentLsp.elicitation`, else `window/showMessageRequest` for a
  question one button answers; no answer or an error is "cancel".
- open_url (an MCP server's sign-in page) -> `window/showDocument {external:
  true}` when the client supports it, else (or when it fails) a
  `window/showMessage` with the URL for the user to open.
- save -> `agent/saveDocuments` (every edited file) when the client declared
  `saveDocuments`, whose answer names the buffers it left unsaved because they
  hold the user's own unsaved changes; otherwise the server writes the open buffers' text to disk itself: the
  text after the agent's applied edits (the client's didChange may come
  later), and only when the file on disk differs.

Every server->client request is shielded from cancellation (in pygls, a
cancelled wait makes the client's late reply crash the response handler).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

from agent_lsp.agent.ports import (
    ApplyResult,
    CreateFile,
    DeleteFile,
    DocumentSnapshot,
    EditOperation,
    PermissionAnswer,
    PermissionRequest,
    RenameFile,
    TextEdit,
    TextFileEdit,
)
from agent_lsp.lsp.apply_edit_params import AgentApplyEditParams
from agent_lsp.lsp.protocol import (
    AgentLspClientCapabilities,
    ApplyEditAgentLsp,
    ElicitParams,
    ElicitResult,
    PermissionAnsweredParams,
    PermissionParams,
    PermissionResult,
    SaveDocumentsResult,
    wire_dump,
)
from agent_lsp.tools.text import line_content, line_starts
from agent_lsp.workspace.disk_editor import EditFailed, apply_text_edits, write_text_if_changed
from agent_lsp.workspace.documents import Documents, normalise_path
from agent_lsp.visible import visible, visible_name

if TYPE_CHECKING:  # the MCP layer is imported with the agent machinery, not at server start
    from agent_lsp.mcp.elicitation import Answer, Question

log = logging.getLogger(__name__)

NUDGE_AFTER_S = 1.0  # a request not answered by then: one notification wakes a client that left it unread
NUDGE_METHOD = "$/agentLsp/wake"

PERMISSION_ACTIONS: dict[str, PermissionAnswer] = {
    "Allow once": "once",
    "Allow for session": "session",
    "Always allow": "always",
    "Deny": "deny",
}


def _edited_paths(operations: list[EditOperation]) -> list[Path]:
    return [op.new_path if isinstance(op, RenameFile) else op.path for op in operations]


def wire_text_edits(text: str, edits: tuple[TextEdit, ...], encoding: str) -> list[types.TextEdit]:
    """The edits of `text` (code-point positions) as LSP TextEdits in the negotiated
    position encoding."""
    codec = PositionCodec(encoding)
    starts = line_starts(text)  # once per text: an edit may have thousands of positions
    # Only the lines the edit touches; the codec only looks up lines[line].
    lines = {line: line_content(text, starts, line) for e in edits for line in (e.start[0], e.end[0])}

    def position(pos: tuple[int, int]) -> types.Position:
        return codec.position_to_client_units(lines, ServerTextPosition(*pos))  # type: ignore[arg-type]

    return [types.TextEdit(range=types.Range(start=position(e.start), end=position(e.end)), new_text=e.new_text) for e in edits]


class LspEditor:
    """One per server; the documents are shared by every workspace host."""

    def __init__(self, server: LanguageServer, documents: Documents, *, permission_timeout_s: float = 600.0):
        self.server = server
        self.documents = documents
        self.agent_caps = AgentLspClientCapabilities()
        self.permission_timeout_s = permission_timeout_s
        # the effective edits.review of the folder(s) of these paths (set by the server, which knows the folders)
        self.review_mode_of: Callable[[list[Path]], str] = lambda paths: "apply"

    # ----------------------------------------------------------- capabilities

    @property
    def _client(self) -> types.ClientCapabilities:
        return self.server.client_capabilities

    @property
    def _workspace_edit_caps(self) -> types.WorkspaceEditClientCapabilities | None:
        workspace = self._client.workspace if self._client else None
        return workspace.workspace_edit if workspace else None

    @property
    def supports_document_changes(self) -> bool:
        caps = self._workspace_edit_caps
        return bool(caps and caps.document_changes)

    @property
    def supports_resource_operations(self) -> bool:
        caps = self._workspace_edit_caps
        if not (caps and caps.document_changes and caps.resource_operations):
            return False
        wanted = {types.ResourceOperationKind.Create, types.ResourceOperationKind.Rename, types.ResourceOperationKind.Delete}
        return wanted <= set(caps.resource_operations)

    @property
    def position_encoding(self) -> str:
        encoding = getattr(self.server.workspace, "position_encoding", None)
        return encoding or types.PositionEncodingKind.Utf16

    # -------------------------------------------------------------- documents

    def document(self, path: Path) -> DocumentSnapshot | None:
        return self.documents.get(path)

    def open_documents(self) -> list[Path]:
        return self.documents.paths()

    # ------------------------------------------------------------------ edits

    async def apply_edit(self, operations: list[EditOperation], label: str, review: str | None = None) -> ApplyResult:
        try:
            edit = self._workspace_edit(operations)
        except _Unsupported as reason:
            return ApplyResult(False, str(reason))
        # only to our plugins (they save edits themselves and declare saveDocuments):
        # eglot refuses a request with a member it does not know
        member = None
        if self.agent_caps.save_documents:
            # the mode the edit was made under, when the caller read it: the same one
            # decides whether the server holds or saves it after it lands
            mode = review if review is not None else self.review_mode_of(_edited_paths(operations))
            member = wire_dump(ApplyEditAgentLsp(review=mode))
        params = AgentApplyEditParams(edit=edit, label=label, agent_lsp=member)
        edited = self._edited_buffers(operations)
        try:
            result = await self._answer_of(self.server.protocol.send_request_async(types.WORKSPACE_APPLY_EDIT, params))
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the client answered with an error
            return ApplyResult(False, f"the editor refused the edit: {error}")
        applied = bool(getattr(result, "applied", False))
        if applied:
            self._note_applied(edited)
        return ApplyResult(applied, None if applied else (getattr(result, "failure_reason", None) or "the editor did not apply the edit"))

    async def _answer_of(self, request: Any) -> Any:
        """The editor's answer to a request of ours. A client that reads what arrived
        together with the answer to its own synchronous request only once more output
        comes (eglot, when a turn's first request races the answer to the command that
        started it) is sent, after a second without an answer, a `$/` notification
        (which LSP clients ignore), so it reads the request it had left unread."""
        future = asyncio.ensure_future(_shielded(request))
        done, _ = await asyncio.wait({future}, timeout=NUDGE_AFTER_S)
        if not done and not self.agent_caps.events:
            self.server.protocol.notify(NUDGE_METHOD, {})
        return await future

    def _edited_buffers(self, operations: list[EditOperation]) -> list[tuple[TextFileEdit, DocumentSnapshot]]:
        """The open buffers an edit changes, as they are before it is sent."""
        edited = []
        for op in operations:
            snapshot = self.documents.get(op.path) if isinstance(op, TextFileEdit) else None
            if snapshot is not None:
                edited.append((op, snapshot))
        return edited

    def _note_applied(self, edited: list[tuple[TextFileEdit, DocumentSnapshot]]) -> None:
        """Remember a buffer's text after an applied edit until the editor's didChange arrives."""
        for op, before in edited:
            now = self.documents.get(op.path)
            if now is None or now.version != before.version:
                continue  # closed, or the didChange came first: the buffer text is current
            try:
                self.documents.edit_applied(op.path, apply_text_edits(before.text, op))
            except EditFailed:
                pass  # not for an edit built on this text; the didChange will tell

    def _workspace_edit(self, operations: list[EditOperation]) -> types.WorkspaceEdit:
        if not self.supports_document_changes:
            changes: dict[str, list[types.TextEdit]] = {}
            for op in operations:
                if not isinstance(op, TextFileEdit):
                    raise _Unsupported("this editor cannot create, rename or delete files (no resourceOperations support)")
                self._check_version(op)
                changes.setdefault(self.documents.uri_of(op.path), []).extend(self._text_edits(op))
            return types.WorkspaceEdit(changes=changes)
        document_changes: list[Any] = []
        for op in operations:
            if isinstance(op, TextFileEdit):
                self._check_version(op)
                document_changes.append(
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(
                            uri=self.documents.uri_of(op.path), version=op.version
                        ),
                        edits=self._text_edits(op),
                    )
                )
                continue
            if not self.supports_resource_operations:
                raise _Unsupported("this editor cannot create, rename or delete files (no resourceOperations support)")
            if isinstance(op, CreateFile):
                document_changes.append(
                    types.CreateFile(
                        uri=op.path.as_uri(),
                        options=types.CreateFileOptions(overwrite=op.overwrite, ignore_if_exists=op.ignore_if_exists),
                    )
                )
            elif isinstance(op, RenameFile):
                document_changes.append(
                    types.RenameFile(
                        old_uri=self.documents.uri_of(op.old_path), new_uri=op.new_path.as_uri(), options=types.RenameFileOptions(overwrite=op.overwrite)
                    )
                )
            elif isinstance(op, DeleteFile):
                document_changes.append(
                    types.DeleteFile(uri=self.documents.uri_of(op.path), options=types.DeleteFileOptions(recursive=op.recursive, ignore_if_not_exists=False))
                )
        return types.WorkspaceEdit(document_changes=document_changes)

    def _check_version(self, op: TextFileEdit) -> None:
        current = self.documents.get(op.path)
        if current is not None and op.version is not None and current.version != op.version:
            raise _Unsupported(f"{visible_name(str(op.path))} changed in the editor (version {current.version}, edit computed on {op.version})")

    def _text_edits(self, op: TextFileEdit) -> list[types.TextEdit]:
        return wire_text_edits(self._text_of(op.path), op.edits, self.position_encoding)

    def _text_of(self, path: Path) -> str:
        snapshot = self.documents.get(path)
        if snapshot is not None:
            return snapshot.text
        try:
            return normalise_path(path).read_text(encoding="utf-8")
        except OSError:
            return ""  # a new file: every position is on an empty text

    # ----------------------------------------------------------------- saving

    async def save(self, paths: list[Path]) -> list[Path]:
        if self.agent_caps.save_documents:
            # every edited file: a client may edit a buffer the server was never told
            # of (agent-lsp.el's connection manages only its chat buffer)
            uris = {self.documents.uri_of(p): p for p in paths}
            try:
                reply = await _shielded(self.server.protocol.send_request_async("agent/saveDocuments", {"uris": list(uris)}))
            except asyncio.CancelledError:
                raise
            except Exception as error:
                log.warning("agent/saveDocuments failed (%s); writing the buffers to disk", error)
            else:
                try:
                    unsaved = SaveDocumentsResult.model_validate(as_json(reply) or {}).unsaved or []
                except ValueError:
                    unsaved = []
                return [uris[uri] for uri in unsaved if uri in uris]
        for path in paths:
            text = self.documents.text_to_save(path)
            if text is not None:
                await asyncio.to_thread(write_text_if_changed, normalise_path(path), text)
        return []

    # ------------------------------------------------------------- permission

    async def ask_permission(self, request: PermissionRequest) -> PermissionAnswer:
        # No answer in time raises: the permission policy tells the model nobody answered.
        return await asyncio.wait_for(self._ask(request), self.permission_timeout_s)

    async def _ask(self, request: PermissionRequest) -> PermissionAnswer:
        if self.agent_caps.permissions:
            params = PermissionParams(
                session_id=request.session_id,
                tool=request.tool,
                kind=request.kind,
                title=request.title,
                detail=request.detail,
                command=request.command,
                path=str(request.path) if request.path else None,
                choices=list(request.choices),
                asks_every_time=request.asks_every_time,
                diff=request.diff,
                permission_id=request.permission_id,
            )
            try:
                reply = await _shielded(self.server.protocol.send_request_async("agent/permission", wire_dump(params)))
                return PermissionResult.model_validate(as_json(reply)).answer
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the policy says "could not be asked", not "denied"
                log.warning("agent/permission failed: %s", error)
                raise
        # Deny first: editors preselect the first action (eglot's RET takes it), and a key
        # pressed as the question appears must not approve anything.
        titles = ["Deny", *(title for title, answer in PERMISSION_ACTIONS.items()
                            if answer in request.choices and answer != "deny")]
        # The choices are in the text too: some clients show only the message until asked to complete.
        lines = [request.title, request.detail, request.diff, request.asks_every_time, f"Answer: {' / '.join(titles)}"]
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message="agent-lsp: " + visible("\n".join(line for line in lines if line)),
            actions=[types.MessageActionItem(title=title) for title in titles],
        )
        try:
            reply = await self._answer_of(self.server.protocol.send_request_async(types.WINDOW_SHOW_MESSAGE_REQUEST, params))
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the policy says "could not be asked", not "denied"
            log.warning("window/showMessageRequest failed: %s", error)
            raise
        title = getattr(reply, "title", None) if reply is not None else None
        return PERMISSION_ACTIONS.get(title or "", "deny") if title in titles else "deny"


    def permission_settled(self, request: PermissionRequest, answer: PermissionAnswer) -> None:
        """The question, asked here too, was answered in another window: the client drops it."""
        if self.agent_caps.permissions and request.permission_id:
            self.server.protocol.notify("agent/permission/answered", wire_dump(PermissionAnsweredParams(
                session_id=request.session_id, permission_id=request.permission_id, answer=answer)))

    async def elicit(self, question: Question) -> Answer:
        """An MCP server's question: `agent/elicit` when the client declared it, else
        `window/showMessageRequest` when one button can answer it, else declined.
        The manager bounds the wait; a failed request or no pick is `cancel`."""
        from agent_lsp.mcp.elicitation import Answer, single_choice

        if self.agent_caps.elicitation:
            params = ElicitParams(session_id=question.session_id, server=question.server, message=question.message,
                                  requested_schema=question.schema)
            try:
                reply = await _shielded(self.server.protocol.send_request_async("agent/elicit", wire_dump(params)))
                result = ElicitResult.model_validate(as_json(reply))
            except asyncio.CancelledError:
                raise
            except Exception as error:
                log.warning("agent/elicit failed: %s", error)
                return Answer("cancel")
            return Answer(result.action, result.content)
        choices = single_choice(question.schema)
        if choices is None:
            return Answer("decline", reason="its form has fields a message with buttons cannot ask; "
                                             "answering needs a client with experimental.agentLsp.elicitation")
        picks = {visible(title): content for title, content in choices}
        titles = [*picks, "Decline"]
        params_ = types.ShowMessageRequestParams(
            type=types.MessageType.Info,
            message=visible(f"agent-lsp: the MCP server '{question.server}' asks: {question.message}\nAnswer: {' / '.join(titles)}"),
            actions=[types.MessageActionItem(title=title) for title in titles],
        )
        try:
            reply = await self._answer_of(self.server.protocol.send_request_async(types.WINDOW_SHOW_MESSAGE_REQUEST, params_))
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log.warning("window/showMessageRequest failed: %s", error)
            return Answer("cancel")
        title = getattr(reply, "title", None) if reply is not None else None
        if title in picks:
            return Answer("accept", picks[title])
        return Answer("decline") if title == "Decline" else Answer("cancel")


    # ----------------------------------------------------------------- browser

    async def open_url(self, url: str, why: str) -> None:
        """Open `url` in the user's browser; `why` says what it is for, where it cannot be opened."""
        window = self._client.window if self._client else None
        if window and window.show_document and window.show_document.support:
            try:
                reply = await _shielded(self.server.protocol.send_request_async(
                    types.WINDOW_SHOW_DOCUMENT, types.ShowDocumentParams(uri=url, external=True)))
                if getattr(reply, "success", False):
                    return
                log.info("window/showDocument did not open %s", url)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                log.warning("window/showDocument failed: %s", error)
        self.server.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=visible(f"agent-lsp: {why}: open {url}")))


class _Unsupported(Exception):
    pass


async def _shielded(future: Any) -> Any:
    """Await a server->client request without letting our cancellation cancel it."""
    return await asyncio.shield(future)


def as_json(value: Any) -> Any:
    """Results of custom requests may arrive as namedtuples (pygls' default converter)."""
    if hasattr(value, "_asdict"):
        return {k: as_json(v) for k, v in value._asdict().items()}
    if isinstance(value, list):
        return [as_json(v) for v in value]
    return value
