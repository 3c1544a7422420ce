"""`agent-lsp config show`: the merged configuration of a workspace and where each value came from
(agent_lsp.workspace.scopes), as text or `--json`."""

from __future__ import annotations

import argparse
import json
import os
import sys

from agent_lsp.cli.run import EXIT_OK, EXIT_USAGE, UsageError, load_settings, workspace_from
from agent_lsp.visible import visible


def config_command(args: argparse.Namespace) -> int:
    from agent_lsp.workspace.scopes import format_view, merged_view

    try:
        workspace = workspace_from(args)
        settings = load_settings(args.settings)
    except UsageError as error:
        print(f"agent-lsp: {error}", file=sys.stderr)
        return EXIT_USAGE
    view = merged_view(workspace, os.environ, settings)
    if args.json:
        print(json.dumps(view.to_json(), indent=2))
    else:
        sys.stdout.write(visible(format_view(view)))  # a project's files may name things with control characters
    return EXIT_OK
