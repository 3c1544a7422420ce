"""The wire models of language queries: the agent asks the editor's own language servers."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agent_lsp.lsp.wire_base import Position, Range, WireModel

LanguageQueryKind = Literal["diagnostics", "definition", "references", "hover", "documentSymbols",
                            "workspaceSymbols", "rename", "codeActions"]


class QueriedDocument(WireModel):
    uri: str
    version: int | None = Field(default=None, description=(
        "the buffer version the answer must be for: the client waits (up to timeoutMs) until its language "
        "servers have reported on it; null: the document is not open in the editor (open it unseen)"))


class LanguageQueryParams(WireModel):
    """Server -> client: ask the editor's own language servers for this document (never agent_lsp itself)."""

    kind: LanguageQueryKind
    text_document: QueriedDocument | None = Field(default=None, description="absent for workspaceSymbols, and for "
                                                  "diagnostics of every file")
    position: Position | None = Field(default=None, description="definition, references, hover, rename")
    range: Range | None = Field(default=None, description="codeActions: the lines to fix")
    new_name: str | None = None
    query: str | None = None
    everywhere: bool = Field(default=False, description="diagnostics: every file the editor has diagnostics for, "
                             "besides textDocument")
    timeout_ms: int = Field(description="how long the client may wait for its servers")


class FileDiagnostics(WireModel):
    uri: str
    diagnostics: list[dict[str, Any]] = Field(description="LSP Diagnostic objects")


class LanguageQueryResult(WireModel):
    servers: list[str] = Field(description="the language servers that answered; empty: the editor has none for "
                               "this document, and the agent asks its own")
    pending: bool = Field(default=False, description="diagnostics: the servers had not reported on the version "
                          "within timeoutMs")
    files: list[FileDiagnostics] | None = None
    checked: list[str] | None = Field(default=None, description=(
        "diagnostics with everywhere: the URIs of the other documents the servers checked in full for this "
        "answer (one of them absent from files has no problems); absent: the client does not say"))
    locations: list[dict[str, Any]] | None = Field(default=None, description="LSP Location or LocationLink objects")
    hover: str | None = Field(default=None, description="the hover's text (markdown or plain)")
    symbols: list[dict[str, Any]] | None = Field(default=None, description="LSP DocumentSymbol or SymbolInformation")
    edit: dict[str, Any] | None = Field(default=None, description="rename: an LSP WorkspaceEdit")
    actions: list[dict[str, Any]] | None = Field(default=None, description="codeActions: LSP CodeAction objects "
                                                 "with their edit")


class LanguageStatusParams(WireModel):
    workspace_uri: str | None = Field(default=None, description="no workspaceUri: every open workspace")


class LanguageServerStatus(WireModel):
    """A language server the agent may run itself for a folder, and whether it does."""

    workspace_uri: str
    name: str
    filetypes: list[str]
    command: str = Field(description="the command line, as configured")
    state: Literal["running", "found", "not-found", "other-serves", "failed", "off"] = Field(description=(
        '"found": used, starts with the first file of its kind; "other-serves": another server of the same '
        'language is used; "off": language.enabled is false, or a built-in server while language.discovery is false'))
    reason: str = Field(description="why, in words")
    source: Literal["built-in", "settings"]
    sandbox: str | None = Field(default=None, description=(
        'where the server runs, for one used: "sandboxed, no network", "sandboxed, with network (why)", '
        '"not sandboxed: why" or "not started: why" (the sandbox of the agent\'s commands, docs/sandbox.md)'))


class LanguageStatusResult(WireModel):
    servers: list[LanguageServerStatus]
    editor_first: bool = Field(description="the client answers agent/languageQuery: its own servers answer first")
