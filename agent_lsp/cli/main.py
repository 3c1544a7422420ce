"""`agent-lsp`: serve LSP (what editors launch), or drive the server headless.

    agent-lsp                          serve on stdio (same as `agent-lsp serve`)
    agent-lsp serve --tcp 127.0.0.1:8765
    agent-lsp run "fix the failing test" [--workspace DIR] [--session ID | --worktree] [--yes]
    agent-lsp chat [--workspace DIR]
    agent-lsp sessions [list [--query TEXT] [--since WHEN] [--until WHEN] | show ID | export ID [-o FILE] | delete ID]
                       [--workspace DIR]
    agent-lsp demo
    agent-lsp acp                      serve the Agent Client Protocol on stdio (Zed, JetBrains, ...)
    agent-lsp --host                   serve on stdio through the user's agent host (one process for every window)
    agent-lsp daemon                   run the agent host itself (the first `--host` window starts it)

Only argparse is imported up front: `agent-lsp --version` and `--help` stay
fast, and each command imports what it needs.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Sequence

from agent_lsp import __version__
from agent_lsp.cli.attention import DEFAULT_AFTER_S, bell_after

LOG_LEVELS = ("debug", "info", "warning", "error")
DEFAULT_HOST = "127.0.0.1"


def parse_address(value: str) -> tuple[str, int]:
    """`HOST:PORT`, `:PORT` or `PORT` (host defaults to loopback); `[::1]:PORT` for IPv6."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "", value
    host = host.strip("[]") or DEFAULT_HOST
    try:
        number = int(port)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}") from None
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"port out of range in {value!r}")
    return host, number


def _add_logging_options(parser: argparse.ArgumentParser, *, top_level: bool) -> None:
    # Sub-commands repeat the options with SUPPRESS defaults so that
    # `agent-lsp --log-level debug run ...` and `agent-lsp run ... --log-level debug` both work.
    default = None if top_level else argparse.SUPPRESS
    parser.add_argument("--log-file", type=Path, default=default, metavar="PATH",
                        help="write logs (the server's included) to this file instead of stderr")
    parser.add_argument("--log-level", choices=LOG_LEVELS, type=str.lower, default=default,
                        help="log verbosity (default: warning)")


def _add_transport_options(parser: argparse.ArgumentParser, *, top_level: bool) -> None:
    default = None if top_level else argparse.SUPPRESS
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--stdio", action="store_true", default=default,
                       help="speak LSP on stdin/stdout (the default)")
    group.add_argument("--tcp", type=parse_address, default=default, metavar="HOST:PORT",
                       help="listen for one LSP client on a TCP port (host defaults to 127.0.0.1)")
    group.add_argument("--ws", type=parse_address, default=default, metavar="HOST:PORT",
                       help="listen for one LSP client over WebSocket (needs the websockets package: the ws extra)")
    _add_host_options(parser, top_level=top_level)


def _add_host_options(parser: argparse.ArgumentParser, *, top_level: bool) -> None:
    default = None if top_level else argparse.SUPPRESS
    host = parser.add_mutually_exclusive_group()
    host.add_argument("--host", dest="host", action="store_const", const=True, default=default,
                      help="on stdio: connect to the user's agent host (started if none runs), which serves every "
                      "window from one warm process; also AGENT_LSP_HOST=1")
    host.add_argument("--no-host", dest="host", action="store_const", const=False, default=default,
                      help="on stdio: serve from this process alone (the default)")
    parser.add_argument("--connect", type=parse_address, default=default, metavar="HOST:PORT",
                        help="on stdio: connect to an agent host's --listen address (through an SSH tunnel, say), "
                        "with its token in AGENT_LSP_HOST_TOKEN")


def _add_client_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workspace", "-w", type=Path, default=None, metavar="DIR",
                        help="the workspace folder (default: the current directory)")
    parser.add_argument("--settings", default=None, metavar="JSON|FILE",
                        help="agentLsp settings sent as initializationOptions: JSON text or a JSON file")


def _add_permission_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--yes", "--allow", "-y", dest="permission", action="store_const", const="allow",
                       help="allow every action the agent asks permission for (once each)")
    group.add_argument("--deny", dest="permission", action="store_const", const="deny",
                       help="deny every permission request (default when stdin is not a terminal)")
    parser.set_defaults(permission=None)
    parser.add_argument("--bell-after", type=bell_after, default=DEFAULT_AFTER_S, metavar="SECONDS",
                        help="at a terminal, ring its bell when a turn that ran this long ends "
                        f"(default {DEFAULT_AFTER_S:g}; 'off': never); a question of the agent always rings it")


TOP_LEVEL_EPILOG = """\
a model:
  With no model configured the agent is a scripted stand-in ("You said: ...").
  OpenAI or Anthropic: set OPENAI_API_KEY or ANTHROPIC_API_KEY.
  A local OpenAI-compatible server (llama.cpp, Ollama, vLLM, LM Studio):
    AGENT_LSP_BASE_URL=http://localhost:8080/v1  (and AGENT_LSP_MODEL=NAME)
  Or a [model] table in the user config file, or the editor's settings.

first steps:
  agent-lsp demo          watch the agent fix a bug in a sample project
  agent-lsp config show   what applies here, and where each setting came from
  agent-lsp run "..."     one prompt in the current folder
"""


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent-lsp",
        description="A language server that hosts an AI coding agent. With no command it serves "
        "LSP on stdio, which is what editors launch.",
        epilog=TOP_LEVEL_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"agent-lsp {__version__}")
    _add_logging_options(parser, top_level=True)
    _add_transport_options(parser, top_level=True)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = commands.add_parser("serve", help="serve LSP (stdio by default)",
                                description="Serve LSP on stdio (default), TCP or WebSocket.")
    _add_transport_options(serve, top_level=False)
    _add_logging_options(serve, top_level=False)

    run = commands.add_parser("run", help="send one prompt and print the agent's answer",
                              description="Start the server, send PROMPT to the agent in the workspace, "
                              "apply its edits to the files, print what it says as it streams, and exit "
                              "when it is done. PROMPT '-' reads the prompt from stdin.")
    run.add_argument("prompt", metavar="PROMPT", help="what to ask the agent ('-': read it from stdin)")
    run.add_argument("--session", "-s", default=None, metavar="ID", help="continue this stored session")
    run.add_argument("--worktree", action="store_true",
                     help="work in a new git worktree on a new branch (agent/...), outside the repository: "
                     "the checkout stays as it is")
    run.add_argument("--image", action="append", default=[], metavar="PATH",
                     help="send this image with the prompt (PNG, JPEG, GIF or WebP, at most 5 MB; repeatable)")
    run.add_argument("--timeout", type=_positive_seconds, default=None, metavar="SECONDS",
                     help="give up (cancel the turn) after this long")
    _add_client_options(run)
    _add_host_options(run, top_level=False)
    _add_permission_options(run)
    _add_logging_options(run, top_level=False)

    chat = commands.add_parser("chat", help="talk to the agent in a simple terminal loop",
                               description="A line-by-line conversation with the agent (with --session, "
                               "the conversation so far is shown first). Ctrl-C cancels the running turn; "
                               "/image PATH attaches an image to your next message. Ctrl-D or /exit ends the chat.")
    chat.add_argument("--session", "-s", default=None, metavar="ID", help="continue this stored session")
    _add_client_options(chat)
    _add_host_options(chat, top_level=False)
    _add_permission_options(chat)
    _add_logging_options(chat, top_level=False)

    sessions = commands.add_parser("sessions", help="list, show, export or delete stored sessions",
                                   description="Stored sessions of a workspace: `sessions` lists them, "
                                   "`sessions show ID` prints one's conversation, `sessions export ID` writes it "
                                   "as Markdown, `sessions delete ID` removes it.")
    sessions.add_argument("action", nargs="?", choices=("list", "show", "export", "delete"), default="list",
                          help="list (the default), show, export or delete")
    sessions.add_argument("session_id", nargs="?", metavar="ID",
                          help="the session to show, export or delete (as `sessions` lists it)")
    sessions.add_argument("--query", "-q", metavar="TEXT",
                          help="list: only sessions with every word of TEXT in their title or messages")
    sessions.add_argument("--since", metavar="WHEN",
                          help="list: only sessions updated since WHEN (2026-03-01, '2026-03-01 14:00', or 3d, 12h, 2w ago)")
    sessions.add_argument("--until", metavar="WHEN", help="list: only sessions last updated before WHEN (as --since)")
    sessions.add_argument("--output", "-o", metavar="FILE", help="export: write the Markdown to FILE (default: stdout)")
    _add_client_options(sessions)
    _add_logging_options(sessions, top_level=False)

    config = commands.add_parser("config", help="show the merged configuration of a workspace",
                                 description="Print the settings, permission rules, hooks, MCP servers and skills "
                                 "that apply in the workspace, each with where it came from (defaults, the user's "
                                 "config file, the environment, --settings as an editor would send them, the "
                                 "project, the managed policy). Starts nothing.")
    config.add_argument("action", nargs="?", choices=("show",), default="show")
    config.add_argument("--json", action="store_true", help="print JSON instead of text")
    _add_client_options(config)
    _add_logging_options(config, top_level=False)

    demo = commands.add_parser("demo", help="watch the agent fix a bug in a sample project",
                               description="Copy a small sample project to the demo's own folder in the "
                               "user's cache (<cache>/agent-lsp/demo, emptied at each run), start the server, "
                               "and let the agent read a file and fix a bug in it through LSP, streaming what "
                               "it says. Uses the configured model, or a built-in scripted model when none is "
                               "configured.")
    demo.add_argument("--scripted", action="store_true",
                      help="use the built-in scripted model even when a real model is configured")
    demo.add_argument("--dir", type=Path, default=None, metavar="DIR",
                      help="put the sample project and its session here (default: <cache>/agent-lsp/demo)")
    _add_logging_options(demo, top_level=False)

    acp = commands.add_parser("acp", help="serve the Agent Client Protocol on stdio (Zed, JetBrains, ...)",
                              description="Serve the agent over the Agent Client Protocol on stdin/stdout: "
                              "the command an ACP client (Zed's agent_servers, a JetBrains ACP agent, "
                              "codecompanion.nvim, ...) is configured to run. Sessions are the same as over LSP.")
    acp.add_argument("--settings", default=None, metavar="JSON|FILE",
                     help="agentLsp settings (as an LSP client's initializationOptions): JSON text or a JSON file")
    _add_host_options(acp, top_level=False)
    _add_logging_options(acp, top_level=False)

    daemon = commands.add_parser("daemon", help="run the user's agent host (editors' `agent-lsp --host` start it)",
                                 description="Run the agent host: one process that serves every editor window "
                                 "connecting with `agent-lsp --host`, on a Unix socket only this user can reach. "
                                 "It stops after --idle-timeout seconds with no connection.")
    daemon.add_argument("--socket", type=Path, default=None, metavar="PATH",
                        help="the socket to listen on (default: in the user's runtime directory; AGENT_LSP_HOST_SOCKET)")
    daemon.add_argument("--idle-timeout", type=_positive_seconds, default=None, metavar="SECONDS",
                        help="stop after this long with no connection (default 600; AGENT_LSP_HOST_IDLE_S)")
    daemon.add_argument("--listen", type=parse_address, default=None, metavar="HOST:PORT",
                        help="also accept connections on this TCP address; each must send the host's token "
                        "(AGENT_LSP_HOST_TOKEN, else a new one written beside the socket). No TLS: reach it "
                        "through an SSH tunnel (docs/agent-host.md)")
    _add_logging_options(daemon, top_level=False)
    return parser


def configure_logging(level: str | None, log_file: Path | None) -> None:
    """Logs go to the log file or stderr; never stdout (stdout may be JSON-RPC)."""
    from agent_lsp.secrets import install_log_masking

    handler: logging.Handler
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(log_file, encoding="utf-8")
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    install_log_masking(root.handlers)  # no key in any record, pygls' message dumps included
    root.setLevel(getattr(logging, (level or "warning").upper()))
    if (level or "warning") != "debug":
        # pygls logs every message body at INFO: far too much unless debugging.
        logging.getLogger("pygls").setLevel(logging.WARNING)


def _log_level_from_env() -> str | None:
    """AGENT_LSP_LOG_LEVEL stands for --log-level (which wins when both are
    given). An invalid value is left to the settings, which report it."""
    value = os.environ.get("AGENT_LSP_LOG_LEVEL", "").strip().lower()
    return value if value in LOG_LEVELS else None


def serve(args: argparse.Namespace) -> int:
    import importlib.util

    from agent_lsp.cli import server_process as process
    from agent_lsp.lsp import server

    around = process.ServerProcess()
    around.install_sigterm_handler()
    if getattr(args, "tcp", None):
        host, port = args.tcp
        around.end(server.serve_tcp(host, port, process=around))
    elif getattr(args, "ws", None):
        if importlib.util.find_spec("websockets") is None:
            print("agent-lsp: --ws needs the websockets package: pip install 'agent-language-server[ws]'", file=sys.stderr)
            return 1
        host, port = args.ws
        server.serve_ws(host, port, process=around)
    else:
        around.end(server.serve_stdio(process=around))
    around.kill_running_commands()  # no shell command outlives the server
    return 0


def daemon_command(args: argparse.Namespace) -> int:
    from agent_lsp.cli import server_process as process
    from agent_lsp.daemon import address
    from agent_lsp.daemon.listener import serve_host

    socket_file = args.socket or address.socket_path(os.environ)
    idle_s = args.idle_timeout or address.idle_seconds(os.environ)
    around = process.ServerProcess()
    around.install_sigterm_handler()
    try:
        code = serve_host(socket_file, idle_s, around, listen=args.listen)
    except address.AddressError as error:
        print(f"agent-lsp daemon: {error}", file=sys.stderr)
        return 1
    around.kill_running_commands()  # no shell command outlives the host
    return code


def acp_command(args: argparse.Namespace) -> int:
    from agent_lsp.acp import server
    from agent_lsp.cli import server_process as process
    from agent_lsp.cli.settings_arg import UsageError, load_settings  # not cli/run.py: it brings the LSP client

    try:
        settings = load_settings(args.settings)
    except UsageError as error:
        print(f"agent-lsp: {error}", file=sys.stderr)
        return 2
    if _use_host(args):
        from agent_lsp.daemon.connector import run_connector

        return run_connector("acp", address=getattr(args, "connect", None), settings=settings)
    if sys.stdin.isatty():  # someone typed it at a prompt: say what it expects
        print("agent-lsp acp: speaking the Agent Client Protocol (JSON-RPC lines) on stdin/stdout, which is "
              "what ACP clients such as Zed run. To talk to the agent here: agent-lsp chat. Ctrl-D to stop.",
              file=sys.stderr)
    around = process.ServerProcess()
    around.install_sigterm_handler()
    around.host_built()  # sessions (and their shell commands) start with the first session/new
    around.end(server.serve_stdio(settings))  # no shell command outlives the agent
    return 0


def _host_from_env() -> bool:
    """AGENT_LSP_HOST=1 and stdin not a terminal (someone typing `agent-lsp` is told what it does first)."""
    from agent_lsp.daemon.address import host_enabled

    return host_enabled(os.environ) and not sys.stdin.isatty()


def _use_host(args: argparse.Namespace) -> bool:
    """On stdio, through the agent host: --host, or AGENT_LSP_HOST=1 unless --no-host."""
    if getattr(args, "tcp", None) or getattr(args, "ws", None):
        return False
    if getattr(args, "connect", None):
        return True
    chosen = getattr(args, "host", None)
    if chosen is not None:
        return chosen
    from agent_lsp.daemon.address import host_enabled

    return host_enabled(os.environ)


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    if words in (["--host"], ["serve", "--host"]) or (not words and _host_from_env()):
        # What editors launch with the agent host on: straight to the connector (no parser,
        # no logging set up: it logs nothing), the window's first answer sooner.
        from agent_lsp.daemon.connector import run_connector

        return run_connector("lsp")
    try:
        return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C before a command handles it (imports, start-up): no traceback
        print(file=sys.stderr)
        return 130


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    command = args.command or "serve"
    if args.log_level is None:
        args.log_level = _log_level_from_env()
    configure_logging(args.log_level, args.log_file)
    if command == "serve" and _use_host(args):
        from agent_lsp.daemon.connector import run_connector

        return run_connector("lsp", address=getattr(args, "connect", None))
    if command == "serve":
        if args.command is None and not (args.tcp or args.ws) and sys.stdin.isatty():
            # Someone typed `agent-lsp` at a prompt: say what is happening.
            print("agent-lsp: serving LSP on stdin/stdout, which is what editors run. "
                  "To try it: agent-lsp demo  (or agent-lsp --help). Ctrl-C to stop.", file=sys.stderr)
        return serve(args)
    if command in ("run", "chat"):
        from agent_lsp.cli import run

        return run.run_command(args) if command == "run" else run.chat_command(args)
    if command == "sessions":
        from agent_lsp.cli import sessions

        return sessions.sessions_command(args)
    if command == "acp":
        return acp_command(args)
    if command == "daemon":
        return daemon_command(args)
    if command == "config":
        from agent_lsp.cli import config_show

        return config_show.config_command(args)
    if command == "demo":
        from agent_lsp.cli import demo

        return demo.demo_command(args)
    raise AssertionError(f"unhandled command {command}")


if __name__ == "__main__":
    sys.exit(main())
