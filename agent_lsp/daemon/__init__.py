"""The agent host: one process per user that serves every editor window.

    connector    `agent-lsp --host` as an editor launches it: a thin stdio relay
                 that finds the user's host (or starts it) and forwards bytes
    listener     the host process: a Unix socket, one connection per window,
                 each with its own protocol state, stopped when idle
    address      where the socket, its lock and the host's log live
    hello        the one line a connector sends before the protocol's bytes

Nothing in this package imports pygls at load time: the connector must start
in tens of milliseconds.
"""
