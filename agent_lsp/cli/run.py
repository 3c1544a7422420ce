"""`agent-lsp run "PROMPT"` and `agent-lsp chat`: the headless client for a
person at a terminal or a script."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import Any, Coroutine, Iterator, Mapping

from pygls.exceptions import JsonRpcException

from agent_lsp.cli.attention import DEFAULT_AFTER_S, Bell
from agent_lsp.cli.client import HeadlessClient, ServerError, default_server_command
from agent_lsp.cli.session_state import TurnResult
from agent_lsp.cli.images import image_block, with_images
from agent_lsp.cli.permission_prompt import PermissionResponder
from agent_lsp.cli.settings_arg import UsageError, load_settings  # noqa: F401 (the commands' usage errors)
from agent_lsp.cli.terminal_input import LineReader
from agent_lsp.cli.transcript import Transcript
from agent_lsp.visible import visible

EXIT_OK = 0
EXIT_TURN_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
CANCEL_WAIT_S = 5.0


def workspace_from(args: argparse.Namespace) -> Path:
    if args.workspace is None and getattr(args, "session", None):
        return folder_of_session(args.session, Path.cwd().resolve(), load_settings(getattr(args, "settings", None)))
    workspace = (args.workspace or Path.cwd()).expanduser().resolve()
    if not workspace.is_dir():
        raise UsageError(f"workspace {workspace} is not a folder")
    return workspace


def folder_of_session(session_id: str, start: Path, settings: dict[str, Any]) -> Path:
    """Sessions are stored per workspace folder: `--session ID` from a subfolder
    means the closest enclosing folder that has that session (else `start`)."""
    for folder in (start, *start.parents):
        if (sessions_dir(folder, settings, os.environ) / f"{session_id}.jsonl").is_file():
            return folder
    return start


def show_image_paths(client: HeadlessClient, transcript: Transcript, session_id: str | None = None) -> None:
    """The transcript prints each image of a user's message with the path of its
    file in the session's folder of files (`<id>.files/`), once the session is known."""
    def folder() -> Path | None:
        sid = client.last_session_id or session_id
        env = os.environ if client.env is None else client.env
        return None if sid is None else sessions_dir(client.workspace, client.settings, env) / f"{sid}.files"
    transcript.image_folder = folder


def sessions_dir(folder: Path, settings: dict[str, Any], env: Mapping[str, str]) -> Path:
    """Where the server keeps the sessions of `folder`, resolved the way the
    server does it (user config file < env < the settings we send)."""
    from agent_lsp.config.layers import SettingsLayers
    from agent_lsp.workspace.session_location import sessions_dir_for

    layers = SettingsLayers(env)
    layers.set_layer("initializationOptions", settings)
    return sessions_dir_for(folder, layers.current, env)


def check_configuration(env: Mapping[str, str], settings: dict[str, Any] | None = None) -> None:
    """A setting that cannot apply (a malformed or missing config file, an
    unknown provider, a bad value) stops a command here, before it would run
    with something else, e.g. the scripted model. Unknown keys only warn: the
    server reports those."""
    from agent_lsp.config.layers import configuration_errors

    errors = configuration_errors(env, settings, source="--settings")
    if errors:
        raise UsageError("\n".join(errors))


def make_client(args: argparse.Namespace, transcript: Transcript, **overrides: Any) -> HeadlessClient:
    settings = load_settings(getattr(args, "settings", None))
    check_configuration(os.environ, settings)
    options: dict[str, Any] = {
        "settings": settings,
        "transcript": transcript,
        "permissions": PermissionResponder(getattr(args, "permission", None), transcript, bell=bell_of(args, transcript)),
        "log_file": getattr(args, "log_file", None),
        "log_level": getattr(args, "log_level", None) or "warning",
        # Asked for a log level but no file: show the server's log on stderr.
        "show_server_log": getattr(args, "log_level", None) is not None,
    }
    host, connect = getattr(args, "host", None), getattr(args, "connect", None)
    if connect is not None:  # a host's --listen address (its token in AGENT_LSP_HOST_TOKEN)
        options["server_command"] = [*default_server_command(options["log_level"]), "--connect", "%s:%d" % connect]
    elif host is not None:  # --host / --no-host: through the agent host, or not (else AGENT_LSP_HOST decides)
        options["server_command"] = [*default_server_command(options["log_level"]), "--host" if host else "--no-host"]
    options.update(overrides)
    workspace = workspace_from(args)
    show_mcp_problems(workspace, settings, transcript)
    return HeadlessClient(workspace, **options)


def bell_of(args: argparse.Namespace, transcript: Transcript) -> Bell:
    return Bell(transcript.err, getattr(args, "bell_after", DEFAULT_AFTER_S))


def show_mcp_problems(workspace: Path, settings: dict[str, Any], transcript: Transcript) -> None:
    """The MCP servers that cannot start (a `.mcp.json` that does not parse, an
    entry without `command`, an unset `${VAR}`, a program that does not
    exist), one line each before the answer, as settings problems are."""
    from agent_lsp.workspace.scopes import mcp_problems

    for problem in mcp_problems(workspace, os.environ, settings):
        transcript.warn(f"agent-lsp: {problem}")


def _uncancel() -> None:
    # asyncio.run() turns Ctrl-C into a cancel of the main task; we handled
    # it, so later awaits (the clean shutdown) must not see it again.
    task = asyncio.current_task()
    if task is not None:
        while task.cancelling():
            task.uncancel()


async def cancel_running_turn(client: HeadlessClient, transcript: Transcript) -> None:
    """Ask the agent to stop every running session of this client, and the one it
    prompted last, and wait briefly for each to be idle."""
    transcript.warn("(cancelling...)")
    running = {sid for sid, state in client.sessions.items() if state.status == "running"}
    for session_id in sorted(running | ({client.last_session_id} if client.last_session_id else set())):
        try:
            await asyncio.wait_for(client.cancel(session_id), CANCEL_WAIT_S)
            await asyncio.wait_for(_idle(client, session_id), CANCEL_WAIT_S)
        except Exception:  # noqa: BLE001 - stopping anyway; the server ends the turn on exit
            pass


async def _idle(client: HeadlessClient, session_id: str) -> None:
    state = client.session(session_id)
    while state.status != "idle":
        state.changed.clear()
        await state.changed.wait()


def session_hint(transcript: Transcript, session_id: str) -> None:
    """The closing lines: the model and what it used, and how to go on."""
    usage = transcript.usage_summary()
    if usage:
        transcript.info(usage)
    transcript.info(f"session {session_id}  (continue it with --session {session_id})")


def _report(result: TurnResult, transcript: Transcript) -> int:
    session_hint(transcript, result.session_id)
    return EXIT_OK if result.ok else EXIT_TURN_FAILED


def run_main(name: str, main: Coroutine[Any, Any, int]) -> int:
    """Run one sub-command's coroutine; its errors become a message and an exit code."""
    try:
        return asyncio.run(main)
    except UsageError as error:
        for line in str(error).splitlines():
            print(f"agent-lsp {name}: {visible(line)}", file=sys.stderr)
        return EXIT_USAGE
    except ServerError as error:
        print(f"agent-lsp {name}: {visible(str(error))}", file=sys.stderr)
        return EXIT_TURN_FAILED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def run_command(args: argparse.Namespace) -> int:
    return run_main("run", _run(args))


async def _run(args: argparse.Namespace) -> int:
    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    images = [image_block(path) for path in getattr(args, "image", None) or ()]
    if not prompt.strip() and not images:
        raise UsageError("the prompt is empty")
    if getattr(args, "worktree", False) and args.session:
        raise UsageError("--worktree starts a new session in a new worktree: leave out --session")
    transcript = Transcript()
    bell = bell_of(args, transcript)
    async with make_client(args, transcript) as client:
        show_image_paths(client, transcript, args.session)
        try:
            session_id = await worktree_session(client, transcript) if getattr(args, "worktree", False) else args.session
            result = await client.followup(with_images(prompt, images), session_id=session_id, timeout=args.timeout)
            bell.turn_ended()
        except asyncio.CancelledError:
            _uncancel()
            await client.settle_followup(CANCEL_WAIT_S)
            await cancel_running_turn(client, transcript)
            if client.last_session_id:
                session_hint(transcript, client.last_session_id)
            return EXIT_INTERRUPTED
        except asyncio.TimeoutError:
            transcript.error(f"the agent did not finish within {args.timeout:g} s; cancelling")
            await cancel_running_turn(client, transcript)
            return EXIT_TURN_FAILED
        except JsonRpcException as error:  # the server refused the request (e.g. unknown session)
            transcript.error(f"agent-lsp run: {error.message}{_unknown_session_hint(error, client)}")
            return EXIT_TURN_FAILED
        return _report(result, transcript)


async def worktree_session(client: HeadlessClient, transcript: Transcript) -> str:
    """A new session in its own git worktree of the workspace (`--worktree`), said on stderr."""
    session_id = (await client.request("agent/session/new", {"workspaceUri": client.workspace_uri,
                                                               "worktree": True}))["sessionId"]
    listed = await client.request("agent/session/list", {"workspaceUri": client.workspace_uri})
    worktree = next((s.get("worktree") for s in listed.get("sessions") or [] if s.get("sessionId") == session_id), None)
    if worktree:
        transcript.info(f"working in the worktree {worktree['path']} on the branch {worktree['branch']}")
    return session_id


def attach(images: list[dict[str, Any]], path: str, transcript: Transcript) -> None:
    """`/image PATH` in chat: the image goes with the next message."""
    if not path:
        transcript.error("/image needs the path of an image file")
        return
    try:
        images.append(image_block(path))
    except UsageError as error:
        transcript.error(str(error))
        return
    transcript.info(f"attached {path}; it goes with your next message")


def _unknown_session_hint(error: JsonRpcException, client: HeadlessClient) -> str:
    if not error.message.startswith("unknown session"):
        return ""
    return (f" for {client.workspace} (a session belongs to the workspace folder it was started in: "
            "run from inside that folder or pass it with --workspace; `agent-lsp sessions -w DIR` lists them)")


def chat_command(args: argparse.Namespace) -> int:
    return run_main("chat", _chat(args))


async def _chat(args: argparse.Namespace) -> int:
    transcript = Transcript()
    lines = LineReader()
    session_id = args.session
    images: list[dict[str, Any]] = []  # attached with /image, sent with the next message
    bell = bell_of(args, transcript)
    async with make_client(args, transcript, permissions=PermissionResponder(
            getattr(args, "permission", None), transcript, lines, bell=bell)) as client:
        show_image_paths(client, transcript, session_id)
        transcript.info(f"chatting in {client.workspace} · model: {await _model_named(client)}\n"
                        "Ctrl-C cancels a turn; Ctrl-D or /exit quits.")
        if session_id:
            try:
                await replay_session(client, session_id)
            except JsonRpcException as error:
                transcript.error(f"agent-lsp chat: {error.message}{_unknown_session_hint(error, client)}")
                return EXIT_TURN_FAILED
        with _ctrl_c_cancels_activity() as activity:
            while True:
                transcript.err.write("you> ")
                transcript.err.flush()
                activity.task = asyncio.ensure_future(lines.readline())
                try:
                    line = await activity.task
                except asyncio.CancelledError:  # Ctrl-C at the prompt: what the banner says, not quit
                    transcript.err.write("\n")
                    transcript.info("(nothing to cancel; Ctrl-D or /exit quits)")
                    continue
                if not line or line.strip() in ("/exit", "/quit"):
                    transcript.err.write("\n")
                    break
                if not line.strip():
                    continue
                if line.strip().split(maxsplit=1)[0] == "/image":
                    attach(images, line.strip()[len("/image"):].strip(), transcript)
                    continue
                content = with_images(line.rstrip("\n"), images)
                images = []  # sent with this message (or refused with the server's reason)
                activity.task = asyncio.ensure_future(client.followup(content, session_id=session_id))
                bell.turn_started()
                try:
                    await activity.task
                    bell.turn_ended()
                except asyncio.CancelledError:  # Ctrl-C during the turn
                    await cancel_running_turn(client, transcript)
                except JsonRpcException as error:
                    transcript.error(f"error: {error.message}")
                # The session exists from the server's answer on, even when its
                # first turn was cancelled: the next message continues it.
                session_id = client.last_session_id or session_id
        if session_id:
            session_hint(transcript, session_id)
    return EXIT_OK


async def _model_named(client: HeadlessClient) -> str:
    """The model the chat talks to, in the banner's words."""
    try:
        info = await client.request("agent/model/info", {"workspaceUri": client.workspace_uri})
    except JsonRpcException:
        return "the configured model"
    if info.get("demo"):
        return "none configured, a scripted stand-in answers (agent-lsp --help says how to set one)"
    return f"{info.get('model')} ({info.get('provider')})"


async def replay_session(client: HeadlessClient, session_id: str) -> None:
    """Print the conversation so far, so a continued chat starts in context."""
    loaded = await client.request("agent/session/load", {"sessionId": session_id})
    replay = Transcript(client.transcript.out, client.transcript.err, show_user=True)
    show_image_paths(client, replay, session_id)
    state = client.session(session_id)
    for event in loaded.get("events") or []:
        replay.event(event)
        state.last_seq = max(state.last_seq, event.get("lastSeq") or event.get("seq", -1))
    replay.end_line()


class _Activity:
    task: asyncio.Future[Any] | None = None


@contextlib.contextmanager
def _ctrl_c_cancels_activity() -> Iterator[_Activity]:
    """While chatting, Ctrl-C cancels what is going on (a turn, or the prompt)
    instead of the whole program."""
    activity = _Activity()
    loop = asyncio.get_running_loop()

    def on_ctrl_c() -> None:
        if activity.task is not None and not activity.task.done():
            activity.task.cancel()

    try:
        loop.add_signal_handler(signal.SIGINT, on_ctrl_c)
        installed = True
    except (NotImplementedError, RuntimeError):  # Windows: Ctrl-C ends the chat
        installed = False
    try:
        yield activity
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)
