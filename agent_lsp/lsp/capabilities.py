"""What the server declares at `initialize`, named once and known without pygls.

pygls builds the `initialize` answer from the features registered and the
client's capabilities, with lsprotocol's types: loading those is most of a
start, and editors wait for that answer before they send anything else. So
what the features declare is written here: the feature modules register from
these names and options (`features/documents.py`, `code_actions.py`, the
command modules), and `initialize_result` gives the answer pygls builds from
them, for the parts of the client's capabilities pygls reads. The early phase
(`agent_lsp.lsp.early`) sends it before pygls has loaded; when pygls has, its
own answer is compared with it (`agent_lsp.lsp.handshake.InitializeFilter`),
and a test compares both over client variants.

This module must not import pygls or lsprotocol.
"""

from __future__ import annotations

from typing import Any, Mapping

from agent_lsp import __version__

SERVER_NAME = "agent-lsp"

# Documents are synchronised incrementally (TextDocumentSyncKind.Incremental);
# the server handles didOpen/didChange/didClose, not willSave or didSave.
TEXT_DOCUMENT_SYNC_KIND = 2
CODE_ACTION_KINDS = ("quickfix", "refactor")

# workspace/executeCommand commands, for editors without a plugin.
RUN_SKILL = "agentLsp.runSkill"
REVIEW_RESOLVE = "agentLsp.review.resolve"
FOLLOWUP = "agentLsp.followup"
STEER = "agentLsp.steer"
CANCEL = "agentLsp.cancel"
NEW_SESSION = "agentLsp.newSession"
# In the order the feature modules register them (`handlers.FEATURES`): pygls lists them so.
COMMANDS = (RUN_SKILL, REVIEW_RESOLVE, FOLLOWUP, STEER, CANCEL, NEW_SESSION)

# The position encodings pygls converts; the client's first one of them is taken, else UTF-16.
POSITION_ENCODINGS = ("utf-8", "utf-16", "utf-32")
DEFAULT_POSITION_ENCODING = "utf-16"

TRACE_VALUES = ("off", "messages", "verbose")
CAPABILITY_SECTIONS = ("workspace", "textDocument", "notebookDocument", "window", "general")
DECLARED_SYNC = ("willSave", "willSaveWaitUntil")


def initialize_result(params: Any) -> dict[str, Any] | None:
    """The result pygls answers `initialize` with for these params; None when
    they are not in the plain form checked here (pygls answers them, errors
    included)."""
    if not _plain_initialize(params):
        return None
    capabilities = params["capabilities"]
    sync: dict[str, Any] = {"openClose": True, "change": TEXT_DOCUMENT_SYNC_KIND}
    declared = _section(capabilities, "textDocument").get("synchronization") or {}
    for key in DECLARED_SYNC:  # declared by the client: answered `false`, else left out (as pygls does)
        if declared.get(key) is not None:
            sync[key] = False
    sync["save"] = False
    return {
        "capabilities": {
            "positionEncoding": position_encoding(capabilities),
            "textDocumentSync": sync,
            "codeActionProvider": {"codeActionKinds": list(CODE_ACTION_KINDS)},
            "executeCommandProvider": {"commands": list(COMMANDS)},
            "workspace": {"workspaceFolders": {"supported": True, "changeNotifications": True},
                          "fileOperations": {}},
        },
        "serverInfo": {"name": SERVER_NAME, "version": __version__},
    }


def position_encoding(capabilities: Mapping[str, Any]) -> str:
    for encoding in _section(capabilities, "general").get("positionEncodings") or ():
        if encoding in POSITION_ENCODINGS:
            return encoding
    return DEFAULT_POSITION_ENCODING


def _section(capabilities: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    return capabilities.get(name) or {}


def _plain_initialize(params: Any) -> bool:
    """Whether `initialize` params have the types pygls requires wherever the
    answer or the server's start depends on them: the top-level fields, the
    capability sections, and the capabilities read above. Deeper capabilities
    are taken as they come (every editor sends valid ones; if pygls rejects
    them after all, the hand-over logs it)."""
    if not isinstance(params, dict) or not _is_int_or_none(params.get("processId")):
        return False
    capabilities = params.get("capabilities")
    if not isinstance(capabilities, dict):
        return False
    if not all(_optional(capabilities.get(name), dict) for name in CAPABILITY_SECTIONS):
        return False
    encodings = _section(capabilities, "general").get("positionEncodings")
    if encodings is not None and not (isinstance(encodings, list) and all(isinstance(e, str) for e in encodings)):
        return False
    sync = _section(capabilities, "textDocument").get("synchronization")
    if sync is not None and not (isinstance(sync, dict) and all(_optional(sync.get(key), bool) for key in DECLARED_SYNC)):
        return False
    client = params.get("clientInfo")
    if client is not None and not (isinstance(client, dict) and isinstance(client.get("name"), str)
                                   and _optional(client.get("version"), str)):
        return False
    folders = params.get("workspaceFolders")
    if folders is not None and not (isinstance(folders, list) and all(
            isinstance(f, dict) and isinstance(f.get("uri"), str) and isinstance(f.get("name"), str) for f in folders)):
        return False
    token = params.get("workDoneToken")
    return (all(_optional(params.get(key), str) for key in ("rootUri", "rootPath", "locale"))
            and (params.get("trace") is None or params.get("trace") in TRACE_VALUES)
            and (isinstance(token, str) or _is_int_or_none(token)))


def _optional(value: Any, kind: type) -> bool:
    return value is None or isinstance(value, kind)


def _is_int_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))
