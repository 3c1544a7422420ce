"""Lifecycle and configuration: initialize, initialized, shutdown, workspace
folders, and the agentLsp settings (initializationOptions, pulled with
`workspace/configuration`, pushed with `didChangeConfiguration`)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types
from pydantic import ValidationError

from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.early import CHANGE_SOURCE, CONFIG_SECTION, CONFIGURATION_SOURCE
from agent_lsp.lsp.file_watchers import watch_capability_files
from agent_lsp.lsp.language_server import AgentLanguageServer, uri_to_path

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_S = 2.0  # how long requests in flight at shutdown may take to finish


def register(server: AgentLanguageServer) -> None:
    @server.feature(types.INITIALIZE)
    def on_initialize(ls: AgentLanguageServer, params: types.InitializeParams) -> None:
        experimental = params.capabilities.experimental
        agent_caps = experimental.get("agentLsp") if isinstance(experimental, dict) else None
        try:
            ls.editor.agent_caps = wire.AgentLspClientCapabilities.model_validate(agent_caps or {})
        except ValidationError as error:
            ls.pending_problems.append(f"capabilities.experimental.agentLsp: {wire.describe_validation_error(error)}")
        ls.pending_problems += ls.settings.set_layer(
            "initializationOptions", params.initialization_options or {}, source="initializationOptions"
        )
        apply_log_level(ls)
        for folder in params.workspace_folders or []:
            path = uri_to_path(folder.uri)
            if path is not None:
                ls.add_folder(path)
        if not ls.folders:
            root = uri_to_path(params.root_uri) if params.root_uri else (Path(params.root_path) if params.root_path else None)
            if root is not None:
                ls.add_folder(root)

    @server.feature(types.INITIALIZED)
    async def on_initialized(ls: AgentLanguageServer, params: types.InitializedParams) -> None:
        ls.warm_up()
        ls.spawn(watch_capability_files(ls))
        async with ls.changing_settings():
            ls.report_problems(ls.pending_problems)
            ls.pending_problems = []
            await pull_configuration(ls)

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: AgentLanguageServer, params: Any) -> None:
        await ls.protocol.settle_requests(SHUTDOWN_GRACE_S)
        await ls.close_hosts()

    @server.feature(types.EXIT)
    async def on_exit(ls: AgentLanguageServer, params: Any) -> None:
        # `exit` may follow `shutdown` (or requests) without waiting for the answers.
        await ls.protocol.settle_requests(SHUTDOWN_GRACE_S)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def on_folders(ls: AgentLanguageServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for folder in params.event.removed:
            path = uri_to_path(folder.uri)
            if path is not None:
                await ls.remove_folder(path)
        for folder in params.event.added:
            path = uri_to_path(folder.uri)
            if path is not None:
                ls.add_folder(path)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_configuration(ls: AgentLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        async with ls.changing_settings():
            caps = ls.client_capabilities.workspace
            if caps and caps.configuration:
                await pull_configuration(ls)
            elif isinstance(params.settings, dict) and CONFIG_SECTION in params.settings:
                await apply_settings(ls, "workspace", params.settings[CONFIG_SECTION], source=CHANGE_SOURCE)


async def pull_configuration(ls: AgentLanguageServer) -> None:
    caps = ls.client_capabilities.workspace
    if not (caps and caps.configuration):
        return
    early, ls.early_configuration = ls.early_configuration, None
    if early is True:  # answered and applied before the server loaded
        return
    try:
        values = await asyncio.shield(
            early if early is not None else ls.protocol.send_request_async(
                types.WORKSPACE_CONFIGURATION,
                types.ConfigurationParams(items=[types.ConfigurationItem(section=CONFIG_SECTION)]),
            )
        )
    except Exception as error:
        log.warning("workspace/configuration failed: %s", error)
        return
    value = values[0] if values else None
    await apply_settings(ls, "workspace", value, source=CONFIGURATION_SOURCE)


async def apply_settings(ls: AgentLanguageServer, layer: str, value: Any, *, source: str) -> None:
    before = ls.settings.current
    problems = ls.settings.set_layer(layer, value or {}, source=source)
    ls.report_problems(problems)
    if ls.settings.current != before:
        apply_log_level(ls)
        for host in ls.live_hosts:
            await host.update_settings(ls.settings.current)


def apply_log_level(ls: AgentLanguageServer) -> None:
    level = ls.settings.current.log_level
    if level is not None:  # else the command line's --log-level stands
        logging.getLogger("agent_lsp").setLevel(level.upper())
