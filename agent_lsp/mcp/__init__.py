"""MCP (Model Context Protocol) servers as tool providers, over the official `mcp` SDK.

config.py      which servers a workspace has (config.toml, .mcp.json, editor settings)
launcher.py    runs a stdio server so it dies with the language server
connection.py  one server: connect, list tools, reconnect with backoff, call
oauth.py       signing in to an HTTP server with OAuth (the SDK's client auth, a loopback callback)
token_store.py its tokens, in a 0600 file of the user's data directory
tool.py        one MCP tool as an agent tool (names, schema, permission, results)
resources.py   mcp_list_resources / mcp_read_resource over the servers' resources
attachments.py `@server:uri` in a followup: the resource as a context item
prompts.py     the servers' prompts as user commands (list, fill in)
elicitation.py a server's question to the user: its shape, and buttons for plain editors
manager.py     the servers of one workspace and their tools in the registry
listing.py     `agent/mcp/list`

Layer: above agent_lsp.tools and config, below the workspace (it implements
the agent's Tool port); it does not import the LSP layer, and the agent layer
does not import it.
"""

from agent_lsp.mcp.config import ServerConfig, ServerProblem, workspace_servers
from agent_lsp.mcp.listing import mcp_list
from agent_lsp.mcp.manager import McpManager

__all__ = ["McpManager", "ServerConfig", "ServerProblem", "mcp_list", "workspace_servers"]
