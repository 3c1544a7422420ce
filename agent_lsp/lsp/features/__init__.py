"""The server's features, one module each; every module's `register(server)`
adds its handlers (thin shims over the workspace hosts and agents)."""
