"""The custom requests are registered from the method table: the server
refuses to start when a method has no handler or a handler no method."""

from __future__ import annotations

import pytest

from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.dispatch import TableMismatch, merged, serve_requests
from agent_lsp.lsp.handlers import REQUESTS, create_server


def test_the_server_serves_exactly_the_methods_of_the_table():
    features = create_server({}).protocol.fm.features
    custom = {method for method in features if method.startswith("agent/")}
    assert custom == set(wire.CLIENT_REQUESTS)


def test_a_method_without_a_handler_is_refused_at_start_up():
    handlers = merged(REQUESTS)
    table = {**wire.CLIENT_REQUESTS, "agent/session/nothing": (wire.SessionRef, wire.Empty)}
    with pytest.raises(TableMismatch, match="no handler for agent/session/nothing"):
        serve_requests(create_server({}), table, handlers)


def test_a_handler_without_a_method_is_refused_at_start_up():
    handlers = merged(REQUESTS)
    table = {method: entry for method, entry in wire.CLIENT_REQUESTS.items() if method != "agent/cancel"}
    with pytest.raises(TableMismatch, match="not in the table: agent/cancel"):
        serve_requests(create_server({}), table, handlers)


def test_a_method_with_two_handlers_is_refused():
    with pytest.raises(TableMismatch, match="agent/cancel has two handlers"):
        merged([*REQUESTS, {"agent/cancel": lambda ls, p: wire.Empty()}])
