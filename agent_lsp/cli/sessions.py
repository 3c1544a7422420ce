"""`agent-lsp sessions [list | show ID | export ID [-o FILE] | delete ID]`: stored sessions of a
workspace, read through the server's agent/session/* requests (the same view
an editor gets)."""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcException

from agent_lsp.cli.client import HeadlessClient
from agent_lsp.cli.run import EXIT_OK, EXIT_TURN_FAILED, EXIT_USAGE, make_client, run_main, sessions_dir, show_image_paths
from agent_lsp.cli.transcript import Transcript
from agent_lsp.views.lines import shorten
from agent_lsp.visible import visible_name


def sessions_command(args: argparse.Namespace) -> int:
    if args.action in ("show", "export", "delete") and not args.session_id:
        print(f"agent-lsp sessions {args.action}: which session? (give its ID; see `agent-lsp sessions`)",
              file=sys.stderr)
        return EXIT_USAGE
    if args.action == "list" and args.session_id:
        print(f"agent-lsp sessions list: takes no ID (to see one session: agent-lsp sessions show {args.session_id})",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        args.filters = list_filters(args)
    except ValueError as error:
        print(f"agent-lsp sessions: {error}", file=sys.stderr)
        return EXIT_USAGE
    return run_main("sessions", _sessions(args))


_AGO = re.compile(r"(\d+)\s*([mhdw])")
_UNIT_S = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def epoch_ms_of(when: str, now: float | None = None) -> int:
    """`when` as epoch ms: an ISO date or date and time (local time unless it
    says otherwise), or a time ago (`30m`, `12h`, `3d`, `2w`)."""
    ago = _AGO.fullmatch(when.strip())
    if ago:
        return int(((time.time() if now is None else now) - int(ago.group(1)) * _UNIT_S[ago.group(2)]) * 1000)
    try:
        return int(datetime.fromisoformat(when.strip()).timestamp() * 1000)
    except ValueError:
        raise ValueError(f"{when!r} is not a date (2026-03-01, '2026-03-01 14:00') or a time ago (30m, 12h, 3d, 2w)") from None


def list_filters(args: argparse.Namespace) -> dict[str, Any]:
    """The agent/session/list filters of the command line (ValueError for a bad date)."""
    filters: dict[str, Any] = {}
    if getattr(args, "query", None):
        filters["query"] = args.query
    if getattr(args, "since", None):
        filters["updatedAfter"] = epoch_ms_of(args.since)
    if getattr(args, "until", None):
        filters["updatedBefore"] = epoch_ms_of(args.until)
    return filters


async def _sessions(args: argparse.Namespace) -> int:
    transcript = Transcript(show_user=True)
    async with make_client(args, transcript) as client:
        try:
            if args.action == "list":
                return await list_sessions(client, args.filters)
            if args.action == "show":
                return await show_session(client, args.session_id)
            if args.action == "export":
                return await export_session(client, args.session_id, getattr(args, "output", None))
            return await delete_session(client, args.session_id)
        except JsonRpcException as error:
            transcript.error(f"agent-lsp sessions: {error.message}")
            return EXIT_TURN_FAILED


def store_dir(client: HeadlessClient) -> Path:
    """Where the server keeps this workspace's sessions."""
    return sessions_dir(client.workspace, client.settings, os.environ if client.env is None else client.env)


def _when(epoch_ms: Any) -> str:
    if not isinstance(epoch_ms, (int, float)):
        return "?"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch_ms / 1000))


def _count(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    return str(n)


def _usage_columns(usage: dict[str, Any]) -> tuple[str, str, str]:
    """TOKENS (input + output), CACHED (input read from the cache) and COST (~estimate) of a session."""
    if not usage:
        return "-", "-", "-"
    tokens = int(usage.get("inputTokens") or 0) + int(usage.get("outputTokens") or 0)
    cost = usage.get("costUsd")
    shown = "-" if cost is None else f"~${cost:.2f}" if cost >= 0.1 else f"~${cost:.4f}"
    if cost is not None and usage.get("unpricedModels"):
        shown += "+"  # some of the tokens are of a model with no known price
    return _count(tokens), _count(int(usage.get("cacheReadTokens") or 0)), shown


async def list_sessions(client: HeadlessClient, filters: dict[str, Any] | None = None) -> int:
    result = await client.request("agent/session/list", {"workspaceUri": client.workspace_uri, **(filters or {})})
    sessions = sorted(result.get("sessions") or [], key=lambda s: s.get("updatedAt", 0), reverse=True)
    out = client.transcript.out
    if not sessions:
        matching = " matching the filters" if filters else ""
        client.transcript.info(f"no stored sessions{matching} for {client.workspace}")
        return EXIT_OK
    for s in sessions:  # an id is a file name in the sessions folder: shown, never acted on
        s["sessionId"] = client.transcript.visible(visible_name(s["sessionId"]))
    id_width = max(len(s["sessionId"]) for s in sessions)
    out.write(f"{'SESSION':<{id_width}}  {'UPDATED':<16}  TURNS  {'TOKENS':>7}  {'CACHED':>7}  {'COST':>8}  TITLE\n")
    for s in sessions:
        title = client.transcript.visible(shorten(s.get("title") or "(untitled)", 60))
        tokens, cached, cost = _usage_columns(s.get("usage") or {})
        out.write(f"{s['sessionId']:<{id_width}}  {_when(s.get('updatedAt')):<16}  {s.get('turns', 0):>5}  "
                  f"{tokens:>7}  {cached:>7}  {cost:>8}  {title}\n")
        if s.get("excerpt"):
            out.write(f"{'':<{id_width}}  {client.transcript.visible(shorten(s['excerpt'], 100))}\n")
    out.flush()
    if any((s.get("usage") or {}).get("costUsd") is not None for s in sessions):
        client.transcript.info("COST is an estimate from list prices (the model.prices setting changes them)")
    client.transcript.info(f"stored in {store_dir(client)}")
    return EXIT_OK


async def show_session(client: HeadlessClient, session_id: str) -> int:
    result = await client.request("agent/session/load", {"sessionId": session_id})
    transcript = client.transcript
    show_image_paths(client, transcript, session_id)
    held = result.get("heldByPid")
    where = f", open in agent-lsp process {held or '?'}: read-only" if held is not None else ""
    transcript.heading(f"session {session_id}  ({result.get('status', '?')}{where})")
    log_file = store_dir(client) / f"{session_id}.jsonl"
    if log_file.is_file():
        transcript.note(f"log: {log_file}")
    for event in result.get("events") or []:
        transcript.event(event)
    transcript.end_line()
    inbox = result.get("inbox") or {}
    queued = len(inbox.get("nextTurn") or []) + len(inbox.get("nextStep") or [])
    if queued:
        transcript.info(f"({queued} message(s) waiting in the inbox)")
    return EXIT_OK


async def export_session(client: HeadlessClient, session_id: str, output: str | None = None) -> int:
    """The session as Markdown (agent/session/export), to `output` or stdout."""
    result = await client.request("agent/session/export", {"sessionId": session_id})
    if output is None:  # to a reader: controls shown, not acted on (-o FILE keeps the text as it is)
        client.transcript.out.write(client.transcript.visible(result["markdown"]))
        client.transcript.out.flush()
        return EXIT_OK
    try:
        Path(output).write_text(result["markdown"], encoding="utf-8")
    except OSError as error:
        client.transcript.error(f"agent-lsp sessions export: cannot write {output}: {error.strerror or error}")
        return EXIT_TURN_FAILED
    client.transcript.info(f"exported session {session_id} to {output}")
    return EXIT_OK


async def delete_session(client: HeadlessClient, session_id: str) -> int:
    result = await client.request("agent/session/delete", {"sessionId": session_id})
    if result.get("deleted"):
        client.transcript.info(f"deleted session {session_id}")
        return EXIT_OK
    client.transcript.error(f"no stored session {session_id}")
    return EXIT_TURN_FAILED
