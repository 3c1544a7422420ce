"""One WorkspaceHost per workspace folder: its sessions, each with its own Agent.

The host builds an Agent for a session (model provider from the settings,
tools over the editor, system prompt from the workspace), keeps the live
agents in its `OpenSessions` (workspace/open_sessions.py), and remembers the
"current" session (the last one used) for editors that drive the agent with
commands only. Its helpers (review, modes, models, titles, sub-agents) get
what they use: the open sessions, the editor, settings as callables.

Where the sessions are stored: workspace/session_location.py. The host reads
no environment variable itself: `env` goes to the config layer's readers
(`data_dir`, `model_environment`).
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping

from agent_lsp.agent import Agent, ToolRegistry
from agent_lsp.agent.ports import Editor
from agent_lsp.agent.tool_set import attach_tool_set
from agent_lsp.config import LanguageSettings, Settings
from agent_lsp.config.environment import model_environment
from agent_lsp.config.files import config_dir
from agent_lsp.config.policy import read_policy
from agent_lsp.language import document_reader, workspace_language
from agent_lsp.mcp import McpManager
from agent_lsp.sandbox import SandboxPolicy
from agent_lsp.store import CorruptSessionError
from agent_lsp.store.damaged import read_until_damage
from agent_lsp.tools import CommandEnvPolicy, build_tools
from agent_lsp.tools.subagent import SubagentTool
from agent_lsp.workspace.capability_files import CapabilityFiles, Kind
from agent_lsp.workspace.checkpoints import WorkspaceCheckpoints
from agent_lsp.tools.todo import TodoWrite
from agent_lsp.tools.language_choice import EditorFirst
from agent_lsp.tools.language_port import LanguageIntelligence
from agent_lsp.tools.base import ToolEnv
from agent_lsp.tools.memory import Remember
from agent_lsp.tools.paths import WorkspaceRoots
from agent_lsp.tools.skills import Skill, SkillTool, load_skills, skill_folders
from agent_lsp.workspace.edit_journal import EditJournal, RevertReport
from agent_lsp.workspace.file_reverts import FileReverts
from agent_lsp.workspace.edit_review import EditReview
from agent_lsp.workspace.from_settings import agent_options, folder_hooks, model_providers, permission_policy
from agent_lsp.workspace.revert_intent import INTENTS_DIR, RevertIntents
from agent_lsp.workspace.managed import guard_denied_tools
from agent_lsp.workspace.rules import Rule, attach_rules, load_rules
from agent_lsp.workspace.user_hooks import UserHooks
from agent_lsp.workspace.instructions import SystemPrompt, attach_workspace_prompt, runtime_context
from agent_lsp.workspace.listing_warm_up import ListingWarmUp
from agent_lsp.workspace.model_warm_up import ModelWarmUp
from agent_lsp.workspace.endpoint_model import EndpointModel
from agent_lsp.workspace.permissions import PermissionPolicy
from agent_lsp.workspace.session_models import SessionModels
from agent_lsp.workspace.session_modes import SessionModes
from agent_lsp.workspace.session_titles import SessionTitles
from agent_lsp.workspace.subagents import Subagents
from agent_lsp.workspace.session_family import FORKED_FROM, RewindOutcome, fork_boundary, fork_title
from agent_lsp.workspace import session_listing
from agent_lsp.workspace.agent_types import agent_type_folders
from agent_lsp.workspace.folder_mcp import folder_servers, make_manager, offer_tools
from agent_lsp.workspace.open_sessions import OpenSessions, UnknownSession
from agent_lsp.workspace.session_listing import SessionListing, SessionSnapshot
from agent_lsp.workspace.session_location import open_store, sessions_dir_for

if TYPE_CHECKING:
    from agent_lsp.language import LazyLanguage
    from agent_lsp.llm.factory import ResolvedModel
    from agent_lsp.store import Session

log = logging.getLogger(__name__)

PERMISSIONS_FILE = "permissions.json"  # "always" answers for this folder
CHECKPOINTS_DIR = "checkpoints"  # contents of the folder's files before commands ran


class WorkspaceHost:
    """The sessions of one workspace folder."""

    def __init__(
        self,
        root: Path,
        *,
        settings: Settings,
        editor: Editor,
        env: Mapping[str, str] = os.environ,
        on_agent: Callable[[Agent], None] | None = None,
        editor_language: Callable[[LanguageSettings], LanguageIntelligence | None] | None = None,
        window: str | None = None,
    ):
        self.root = Path(root).resolve()
        self.uri = self.root.as_uri()
        self.editor = editor
        self.env = env
        self.settings = settings
        self.on_agent = on_agent  # called with every Agent the host creates (the LSP relay attaches)
        self.editor_language = editor_language  # the editor's own language servers, where it relays them
        self.current_session_id: str | None = None
        self.store = open_store(self.root, settings, env, lock_holder=window)  # window: of a multi-window process
        self.sessions = OpenSessions(self.store, load=self._make_agent, build=self.build_agent, spawn=self.spawn,
                                     read=self._load)
        self.listing_warm_up = ListingWarmUp(self.store)  # started by the servers, not by one-shot commands
        self.managed_policy, self.managed_policy_path, _ = read_policy(env)  # its problems: the settings report them
        self.journal = EditJournal()
        # reverts written down before they touch a file: one a crash interrupted is finished or undone
        self.intents = RevertIntents(self.store.directory / INTENTS_DIR, self.root)
        self.reverts = FileReverts(self.journal, self.intents, editor, self.session_log)
        self.recovered: dict[str, str] = {}  # session id -> what was done, told at the session's next load
        # damage a load found (also where the listing's quick scan reads past it, and in a stream
        # chunk line, read when used): read-only from then on, and listed with its problem
        self.damaged = self.sessions.damaged
        # what shell commands change, journaled for revert (a shadow store, not the user's repository)
        self.checkpoints = WorkspaceCheckpoints(self.root, self.store.directory / CHECKPOINTS_DIR,
                                                excluded=(self.store.directory,))
        self.modes = SessionModes(self.sessions)
        # edits waiting for the user ("edits.review": "review")
        self.review = EditReview(self.sessions, editor, self.root, mode=lambda: self.settings.edits.review,
                                 intents=self.intents)
        self.models = SessionModels(lambda: self.settings.model, env, self.spawn)
        # with only a base URL set, the endpoint's one model (workspace/endpoint_model.py)
        self.endpoint_model = EndpointModel(self.models, lambda: self.settings.model, env)
        self.model_warm_up = ModelWarmUp(lambda: self.settings.model.provider, self.resolve_model,
                                         self.endpoint_model.start)
        # titles the model writes ("sessions.titles": "model"), renames
        self.titles = SessionTitles(self.sessions, lambda: self.settings.sessions)
        self.policy = self._make_policy()
        self._registry: ToolRegistry | None = None  # shared by the sessions (tool specs are computed once)
        self._background: set[asyncio.Task] = set()
        self._mcp: McpManager | None = None  # made with the first session (servers start then)
        self._language: LazyLanguage | None = None  # the language servers we run, made with the tools
        self._asked_language: EditorFirst | None = None  # what the tools ask: the editor's servers, then ours
        self.system_prompt = SystemPrompt([self.root])  # the stable start of every request, then the folder's part
        self.subagents = Subagents(self.sessions, self.modes, self.uri,
                                   agent_type_folders(self.root, config_dir(env), Path.home()),
                                   tools=self.tool_registry, system_prompt=lambda: self.system_prompt())
        self._hooks: UserHooks | None = None  # the user and project hooks, read with the first session
        self._skills: dict[str, Skill] | None = None  # read with the tool registry
        self._rules: list[Rule] | None = None  # .agents/rules, read with the first session
        # skills, rules, agent types, project hooks and .mcp.json: read again when they change
        self.capability_files = CapabilityFiles(self.root, config_dir(env), Path.home())
        self.intents.recover_pending(self.store, self._load)  # reverts a crash interrupted (revert_intent.py)

    # ----------------------------------------------------------------- policy

    def _make_policy(self) -> PermissionPolicy:
        return permission_policy(self.settings.permissions, self.managed_policy, self.managed_policy_path,
                                 self.store.directory / PERMISSIONS_FILE, self.root, self.modes.mode_of)

    @property
    def agents(self) -> dict[str, Agent]:
        """The live agents, by session id."""
        return self.sessions.agents

    @property
    def sessions_dir(self) -> Path:
        return sessions_dir_for(self.root, self.settings, self.env)

    def warm_up(self) -> None:
        """What a server does once it opens the folder, in the background: the session
        listing brought up to date, the model provider's imports and the model server's
        window asked before the first request (not by one-shot commands)."""
        self.listing_warm_up.start()
        self.model_warm_up.start()

    # ------------------------------------------------------------- sessions

    def new_session(self, title: str | None = None, meta: dict | None = None) -> Agent:
        """`meta`: more for the session's header (a worktree session's worktree)."""
        session = self.store.create(title=title, meta={"workspaceUri": self.uri, **(meta or {})})
        agent = self._make_agent(session)
        self.current_session_id = agent.session_id
        return agent

    def has_session(self, session_id: str) -> bool:
        return self.sessions.has(session_id)

    def agent(self, session_id: str) -> Agent:
        """The live agent of a session, loading it from the store on first use."""
        return self.sessions.agent(session_id)

    def snapshot(self, session_id: str) -> SessionSnapshot:
        """Read a session without opening it (for one open in another process)."""
        return session_listing.snapshot(self.store, session_id)

    def damaged_snapshot(self, session_id: str) -> SessionSnapshot:
        """Read a session whose file is damaged, without opening or writing it."""
        return session_listing.damaged_snapshot(self.store, session_id)

    def mark_damaged(self, session_id: str) -> CorruptSessionError | None:
        """A line of the session's file turned out damaged after it was loaded (a
        stream chunk line, read when used): from now on it is read-only, its agent
        retired. The damage, or None when every line reads."""
        damage = read_until_damage(self.store.path_of(session_id)).damage
        if damage is None:
            return None
        self.damaged[session_id] = damage
        self.sessions.drop(session_id)
        return damage

    def use(self, session_id: str) -> Agent:
        """The agent of a session the user just addressed; it becomes the current one."""
        agent = self.agent(session_id)
        self.current_session_id = session_id
        return agent

    def current(self) -> Agent:
        """The current session's agent, created on first use."""
        if self.current_session_id and self.has_session(self.current_session_id):
            return self.agent(self.current_session_id)
        return self.new_session()

    def list_sessions(self, query: str | None = None) -> list[SessionListing]:
        """The folder's sessions; with `query`, those with each of its words in
        their title or message text (SessionStore.search)."""
        return session_listing.listings(self.store, session_listing.matching(self.store, query), self.agents,
                                        self.damaged)

    async def list_sessions_off_loop(self, query: str | None = None) -> list[SessionListing]:
        """list_sessions, the files read and searched on a worker thread, so
        streaming sessions and other requests go on meanwhile."""
        found = await asyncio.to_thread(session_listing.matching, self.store, query)
        return session_listing.listings(self.store, found, self.agents, self.damaged)

    async def delete_session(self, session_id: str) -> bool:
        await self.sessions.remove(session_id)
        if self.current_session_id == session_id:
            self.current_session_id = None
        self.journal.forget(session_id)
        self.policy.forget_session(session_id)
        self.modes.forget(session_id)
        self.review.forget(session_id)
        return self.store.delete(session_id)

    async def revert_turn(self, session_id: str, turn: int) -> RevertReport:
        """Undo the agent's file changes of one turn and record it (file_reverts.py)."""
        if not self.has_session(session_id):
            raise UnknownSession(session_id)
        return await self.reverts.revert_turn(session_id, turn)

    def fork_session(self, session_id: str, turn: int) -> Agent:
        """A new session sharing the history of `session_id` up to the end of
        `turn` (the source is read, not changed); it becomes the current one.
        ForkError when the turn has not ended there."""
        live = self.agents.get(session_id)
        header, events = ({"meta": live.session.meta}, live.session.events) if live else self.store.snapshot(session_id)
        boundary = fork_boundary(events, turn)
        child = self.store.fork(session_id, boundary, title=fork_title(events, header, boundary, turn),
                                meta={FORKED_FROM: {"sessionId": session_id, "turn": turn}})
        agent = self._make_agent(child)
        self.current_session_id = agent.session_id
        return agent

    async def rewind_session(self, session_id: str, turn: int, *, revert_files: bool = False) -> RewindOutcome:
        """Cut the session back to before `turn`, reverting the files of the turns cut
        with `revert_files`; it becomes the current session (file_reverts.py)."""
        return await self.reverts.rewind(self.use(session_id), turn, revert_files=revert_files)

    def session_log(self, session_id: str) -> Session:
        """The session's log, without building an agent (reverting needs no model).
        Loading takes the session's lock: SessionLockedError when another server has it."""
        return self.sessions.session_log(session_id)

    def _load(self, session_id: str) -> Session:
        """Load a session from the store, finishing or undoing a revert a crash interrupted."""
        session = self.store.load(session_id)
        recovery = self.intents.recover(session)
        if recovery is not None:
            self.recovered[session_id] = recovery.message
        return session

    def take_recovered(self, session_id: str) -> str | None:
        """What was done with an interrupted revert of this session, once."""
        return self.recovered.pop(session_id, None)

    async def update_settings(self, settings: Settings) -> None:
        """New settings apply to every turn that starts from now: idle agents are
        retired and rebuilt on next use; a running one finishes its turn with the
        old settings and is retired the moment it goes idle, so the session's next
        turn is built with the new ones (same session, same log)."""
        mcp_changed = (settings.mcp_servers, settings.mcp) != (self.settings.mcp_servers, self.settings.mcp)
        self.settings = settings
        self.policy = self._make_policy()
        self._registry = None
        self._hooks = None
        self._skills = None
        self._rules = None
        if self._language is not None:
            language, self._language = self._language, None
            self.spawn(language.close())
        if self._mcp is not None:
            if mcp_changed:
                manager, self._mcp = self._mcp, None
                await manager.stop()
            else:
                self._mcp.policy = self.policy  # rebuilt tools use the new policy
        self.sessions.rebuild_all()

    def refresh_capabilities(self) -> set[Kind]:
        """Read again what changed on disk of the skills, rules, agent types,
        project hooks and `.mcp.json`, and return those kinds. Tools change in the
        shared registry (every session sees them at its next step); new hooks or
        rules rebuild the agents as a settings change does (a running turn ends
        with the old ones); a changed `.mcp.json` restarts only the servers whose
        entries changed."""
        changed = self.capability_files.changed()
        if not changed:
            return changed
        log.info("re-reading %s of %s", ", ".join(sorted(changed)), self.root)
        if "skills" in changed:
            self._skills = None
            if self._registry is not None:
                self._registry.remove(SkillTool.name)
                if self.skills() and not self.managed_policy.denies_tool(SkillTool.name):
                    self._registry.add(SkillTool(self.skills()))
        if "agents" in changed:
            self.subagents.reload_types()
            if self._registry is not None and SubagentTool.name in self._registry:
                self._registry.add(SubagentTool(self.subagents))  # a new object: its description is specced again
        if "mcp" in changed and self._mcp is not None:
            servers, problems = self._mcp_servers()
            restarted = self._mcp.reload(servers, problems)
            log.info("MCP servers restarted after .mcp.json changed: %s", ", ".join(restarted) or "none")
            if self.agents:  # servers start with the folder's first session, which is there already
                self._mcp.start()
        if changed & {"hooks", "rules"}:
            if "hooks" in changed:
                self._hooks = None
            if "rules" in changed:
                self._rules = None
            self.sessions.rebuild_all()
        return changed

    def spawn(self, coroutine) -> None:
        """Run `coroutine` in the background; `close` waits for it."""
        task = asyncio.ensure_future(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def close(self) -> None:
        await self.titles.close()  # before the providers they use are closed
        await self.sessions.close()
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        if self._mcp is not None:
            await self._mcp.stop()
        if self._language is not None:
            await self._language.close()
        self.checkpoints.close()
        await self.listing_warm_up.stop()
        await self.model_warm_up.stop()
        await self.endpoint_model.stop()
        self.store.index.close()

    # -------------------------------------------------------------- building

    def resolve_model(self, model: str | None = None) -> ResolvedModel:
        """The model the settings and env ask for (`model` names another one of the
        same provider); ValueError with a readable message if unusable."""
        # Imported here: the providers bring httpx (~3 MB), which an idle server
        # (an editor open, the agent not used yet) does not need.
        from agent_lsp.llm.factory import create_provider

        settings = self.settings.model if model is None else self.settings.model.model_copy(update={"model": model})
        return create_provider(settings, model_environment(self.env))

    def _make_agent(self, session) -> Agent:
        agent = self.build_agent(session, tools=self.tool_registry(), system_prompt=self.system_prompt)
        self.models.restore(agent)  # a session that switched model goes on with it
        self.titles.attach(agent)
        offer_tools(self.mcp_manager(), agent)
        return agent

    def build_agent(self, session, *, tools: ToolRegistry, system_prompt, model: str | None = None) -> Agent:
        """An agent on `session` with these tools and system prompt, live in this
        host (its events reach the client); a sub-agent's is built here too."""
        resolved = self.resolve_model(model)
        options = agent_options(resolved, self.settings, system_prompt=system_prompt, runtime_context=self._runtime_context)
        agent = Agent(session, providers=model_providers(resolved), tools=tools, options=options)
        self.user_hooks().attach(agent)
        self.endpoint_model.attach(agent)
        attach_tool_set(agent, self.settings.tool_set,  # in plan mode the plan is written with todo_write
                        lambda: ("todo_write",) if self.modes.mode_of(agent.session_id) == "plan" else ())
        attach_workspace_prompt(agent, self.system_prompt.workspace)  # after the stable system prompt and tools
        attach_rules(agent, self.root, self.rules())  # rules and memory as runtime context, after the stable prefix
        guard_denied_tools(agent, self.managed_policy, self.managed_policy_path)  # first on the bus: before the hooks
        self.sessions.agents[agent.session_id] = agent
        if self.on_agent is not None:
            self.on_agent(agent)
        return agent

    def tool_registry(self) -> ToolRegistry:
        if self._registry is None:
            shell = self.settings.shell
            command_env = CommandEnvPolicy(shell.inherit, tuple(shell.pass_env), self.env)
            language = self.settings.language
            self._language = workspace_language(self.root, language, self.settings.language_servers,
                                                document_reader(self.editor), lambda: self.editor.open_documents(),
                                                sandbox=self.sandbox_policy())
            self._asked_language = None
            if language.enabled and (self._language is not None or self.editor_language is not None):
                self._asked_language = EditorFirst(self._editor_side(language), self._language)
            tools = build_tools(self.editor, [self.root], policy=self.policy, journal=self.journal,
                                command_env=command_env, commands=self.checkpoints, review=self.review,
                                language=self._asked_language, problems_after_edit=language.diagnostics_after_edit,
                                sandbox=self.sandbox_policy())
            env = ToolEnv(editor=self.editor, roots=WorkspaceRoots([self.root]), policy=self.policy, journal=self.journal,
                          command_env=command_env)
            tools += [Remember(env), SubagentTool(self.subagents), TodoWrite(self.modes)]
            if self.skills():
                tools.append(SkillTool(self.skills()))
            self._registry = ToolRegistry([t for t in tools if not self.managed_policy.denies_tool(t.name)])
            self.mcp_manager().set_registry(self._registry)
        return self._registry

    def language_status(self) -> list[dict]:
        """The language servers the agent may run for this folder, and whether it does (and why)."""
        from agent_lsp.language import server_choices
        from agent_lsp.language.status import server_status

        language = self.settings.language
        choices, _ = server_choices(language, self.settings.language_servers, self.env.get("PATH"))
        return server_status(language, choices, self._language, self.sandbox_policy(), self.root)

    def use_editor_language(self, editor_language: Callable[[LanguageSettings], LanguageIntelligence | None] | None) -> None:
        """The editor connected (after an early start): its language servers answer first from now on."""
        self.editor_language = editor_language
        if self._asked_language is not None:
            self._asked_language.editor_source = self._editor_side(self.settings.language)

    def _editor_side(self, settings: LanguageSettings) -> Callable[[], LanguageIntelligence | None] | None:
        make = self.editor_language
        return (lambda: make(settings)) if make is not None else None

    def rules(self) -> list[Rule]:
        """The project's rules files (read again after a settings change)."""
        if self._rules is None:
            self._rules, problems = load_rules(self.root)
            for problem in problems:
                log.warning("%s", problem)
        return self._rules

    def skills(self) -> dict[str, Skill]:
        """The skills of the folder and the user (read again after a settings change)."""
        if self._skills is None:
            self._skills, problems = load_skills(skill_folders(self.root, config_dir(self.env), Path.home()))
            for problem in problems:
                log.warning("%s", problem)
        return self._skills

    # ----------------------------------------------------------------- hooks

    def user_hooks(self) -> UserHooks:
        if self._hooks is None:
            self._hooks = folder_hooks(self.root, self.settings, self.managed_policy, self.managed_policy_path,
                                       editor=self.editor, policy=self.policy, transcript_of=self.store.path_of,
                                       sandbox=self.sandbox_policy(), env=self.env)
        return self._hooks

    def sandbox_policy(self) -> SandboxPolicy:
        """Where the agent's commands and hooks run (the `shell` settings; docs/sandbox.md)."""
        return SandboxPolicy.from_settings(self.settings.shell, [self.root], dict(self.env))

    # ------------------------------------------------------------------- MCP

    def mcp_manager(self) -> McpManager:
        if self._mcp is None:
            servers, problems = self._mcp_servers()
            self._mcp = make_manager(servers, problems, root=self.root, settings=self.settings, env=self.env,
                                     editor=self.editor, policy=self.policy)
        return self._mcp

    def _mcp_servers(self) -> tuple[list, list]:
        return folder_servers(self.root, self.settings, self.env, self.managed_policy, self.managed_policy_path)

    def mcp_status(self) -> list[dict]:
        return self.mcp_manager().status()

    def _runtime_context(self) -> str | None:
        """The open files, entered as a message when they change, after the
        stable system prompt, so opening a file does not defeat prompt caches."""
        open_files = [p for p in self.editor.open_documents() if p == self.root or self.root in p.parents]
        return runtime_context([self.root], open_files=sorted(open_files))

