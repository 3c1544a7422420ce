"""A base URL that points at the wrong thing is explained in one line, at
once: `agent-lsp run` against real local HTTP servers that are not a model
API (a static web server, a web app, the right server without `/v1`)."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from cli_helpers import agent_lsp, clean_env

PAGE = b"<!DOCTYPE html><html><head><title>My app</title></head><body>" + b"<p>welcome</p>" * 200 + b"</body></html>"

# path prefix -> (status, content type, body): what a server that is not a model API answers a POST with
ANSWERS = {
    "/webapp": (200, "text/html; charset=utf-8", PAGE),
    "/openai": (404, "application/json", b'{"error": {"message": "Invalid URL (POST /chat/completions)", '
                                         b'"type": "invalid_request_error", "param": null, "code": null}}'),
    "/ollama": (404, "text/plain", b"404 page not found"),
    "/model": (404, "application/json", b'{"error": {"message": "The model `qwen9` does not exist or you do not have '
                                        b'access to it.", "type": "invalid_request_error", "code": "model_not_found"}}'),
}


class _NotAModelApi(BaseHTTPRequestHandler):
    posts: list[str] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        if self.path.endswith("/chat/completions"):  # not the questions about the model's context window
            self.posts.append(self.path)
        prefix = "/" + self.path.split("/")[1]
        status, content_type, body = ANSWERS[prefix]
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # what the client may ask of a local server before the request
        if self.path == "/model/models":
            body = b'{"object": "list", "data": [{"id": "qwen2.5-coder:14b"}, {"id": "llama3.2:3b"}]}'
            self.send_response(200)
            self.send_header("content-type", "application/json")
        else:
            body = b""
            self.send_response(404)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _serve(server: ThreadingHTTPServer) -> Iterator[str]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def web_app() -> Iterator[str]:
    _NotAModelApi.posts = []
    yield from _serve(ThreadingHTTPServer(("127.0.0.1", 0), _NotAModelApi))


@pytest.fixture
def static_site(tmp_path: Path) -> Iterator[str]:
    """A plain static web server: it answers POST with its HTML error page, 501."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_bytes(PAGE)

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    yield from _serve(ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site))))


def _run(tmp_path: Path, base_url: str) -> tuple[int, list[str], float]:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    env = clean_env(tmp_path, OPENAI_BASE_URL=base_url, AGENT_LSP_MODEL="qwen9")
    started = time.monotonic()
    done = agent_lsp(["run", "hello", "-w", str(workspace)], env)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    return done.returncode, errors, time.monotonic() - started


def test_a_static_web_server_is_named_as_not_a_model_api(tmp_path: Path, static_site: str):
    code, errors, took = _run(tmp_path, static_site + "/v1")
    assert code == 1
    assert errors == [f"error: NETWORK: {static_site}/v1/chat/completions answered with an HTML page (HTTP 501): "
                      "not an OpenAI-compatible endpoint (the endpoint comes from OPENAI_BASE_URL)"]
    assert took < 15  # no retries (they took about 20 s)


def test_a_web_app_answering_200_with_a_page_is_named_at_once(tmp_path: Path, web_app: str):
    code, errors, _ = _run(tmp_path, web_app + "/webapp")
    assert code == 1
    assert errors == [f"error: NETWORK: {web_app}/webapp/chat/completions answered with an HTML page (HTTP 200): "
                      "not an OpenAI-compatible endpoint (the endpoint comes from OPENAI_BASE_URL)"]
    assert _NotAModelApi.posts == ["/webapp/chat/completions"]  # asked once, not retried


@pytest.mark.parametrize("prefix, said", [
    ("/openai", "Invalid URL (POST /chat/completions)"),
    ("/ollama", "404 page not found"),
])
def test_a_base_url_without_v1_asks_about_v1_not_the_model(tmp_path: Path, web_app: str, prefix: str, said: str):
    code, errors, _ = _run(tmp_path, web_app + prefix)
    assert code == 1
    assert errors == [f"error: NETWORK: {web_app}{prefix}/chat/completions answered HTTP 404: {said}; "
                      "does the base URL end in /v1? (the endpoint comes from OPENAI_BASE_URL)"]
    assert _NotAModelApi.posts == [f"{prefix}/chat/completions"]


def test_a_missing_model_is_still_blamed_on_the_model_name(tmp_path: Path, web_app: str):
    code, errors, _ = _run(tmp_path, web_app + "/model")
    assert code == 1
    (error,) = errors
    assert error.startswith("error: MODEL_UNAVAILABLE: The model `qwen9` does not exist")
    assert "the model name 'qwen9' comes from AGENT_LSP_MODEL" in error and "/v1" not in error
    assert error.endswith("; the server has: qwen2.5-coder:14b, llama3.2:3b")  # what to pick instead


def test_an_endpoint_pinned_by_the_managed_policy_is_named_as_coming_from_the_policy_file(
        tmp_path: Path, static_site: str):
    policy = tmp_path / "policy.toml"
    policy.write_text(f'[model]\nprovider = "openai"\nbaseUrl = "{static_site}/v1"\n', encoding="utf-8")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = clean_env(tmp_path, AGENT_LSP_POLICY=str(policy), AGENT_LSP_MODEL="qwen9",
                    OPENAI_BASE_URL="http://127.0.0.1:9/v1")  # what the user set, overruled by the policy
    done = agent_lsp(["run", "hello", "-w", str(workspace)], env)
    assert done.returncode == 1
    assert [line for line in done.stderr.splitlines() if line.startswith("error:")] == [
        f"error: NETWORK: {static_site}/v1/chat/completions answered with an HTML page (HTTP 501): "
        f"not an OpenAI-compatible endpoint (the endpoint comes from the managed policy {policy})"]
