"""What the client raises when the service refuses a call, when it cannot be reached, and how it is configured."""

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from orgmem import DEFAULT_URL, Orgmem, OrgmemConnectionError, OrgmemError


def test_an_unknown_key_is_401(client: Orgmem) -> None:
    with pytest.raises(OrgmemError) as raised:
        Orgmem(client.base_url, "mv_not_a_key").list_collections()
    assert raised.value.status == 401
    assert raised.value.detail


def test_a_malformed_session_is_400(client: Orgmem) -> None:
    with pytest.raises(OrgmemError) as raised:
        Orgmem(client.base_url, client.api_key, session="two words").list_collections()
    assert raised.value.status == 400
    assert "x-orgmem-session" in raised.value.detail.lower()


def test_an_unknown_route_is_404(client: Orgmem) -> None:
    with pytest.raises(OrgmemError) as raised:
        client.request("GET", "/v1/memory/no-such-route")
    assert raised.value.status == 404


def test_a_closed_port_is_a_connection_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(OrgmemConnectionError) as raised:
        Orgmem(f"http://127.0.0.1:{port}", "mv_example").list_collections()
    assert raised.value.url == f"http://127.0.0.1:{port}/v1/memory/collections"
    assert f"GET http://127.0.0.1:{port}/v1/memory/collections: " in str(raised.value)
    assert isinstance(raised.value, ConnectionError)


def test_a_server_that_never_answers_is_a_timeout() -> None:
    with socket.socket() as s:
        # Connections complete in the backlog and are never read from.
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(OrgmemConnectionError) as raised:
            Orgmem(f"http://127.0.0.1:{port}", "mv_example", timeout=0.5).list_collections()
    assert "0.5 s" in raised.value.reason or "timed out" in raised.value.reason


class _Canned(BaseHTTPRequestHandler):
    """Answers every request with the class's status, headers and body."""

    status = 200
    headers_out: dict[str, str] = {}
    body = b""

    def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
        self.send_response(self.status)
        for name, value in self.headers_out.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def canned() -> Iterator[tuple[str, type[_Canned]]]:
    """A server of our own, for answers the service does not give on demand."""
    handler = type("Handler", (_Canned,), {})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()
    server.server_close()


def test_a_429_says_when_to_try_again(canned: tuple[str, type[_Canned]]) -> None:
    url, handler = canned
    handler.status, handler.headers_out = 429, {"Content-Type": "application/json", "Retry-After": "7"}
    handler.body = json.dumps({"detail": "Rate limit exceeded"}).encode()
    with pytest.raises(OrgmemError) as raised:
        Orgmem(url, "mv_example").list_collections()
    assert (raised.value.status, raised.value.detail, raised.value.retry_after) == (429, "Rate limit exceeded", 7.0)


def test_an_error_page_that_is_not_json_is_kept_as_the_detail(canned: tuple[str, type[_Canned]]) -> None:
    url, handler = canned
    handler.status, handler.headers_out, handler.body = 502, {"Content-Type": "text/html"}, b"<html>Bad gateway</html>\n"
    with pytest.raises(OrgmemError) as raised:
        Orgmem(url, "mv_example").list_collections()
    assert (raised.value.status, raised.value.detail, raised.value.errors, raised.value.retry_after) == (502, "<html>Bad gateway</html>", [], None)


def test_a_204_answers_none(client: Orgmem, collection: str) -> None:
    client.create_collection(collection)
    assert client.delete_collection(collection) is None


def test_url_and_key_come_from_arguments_else_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORGMEM_URL", "https://memory.example.com/")
    monkeypatch.setenv("ORGMEM_API_KEY", "mv_from_env")
    from_env = Orgmem()
    assert (from_env.base_url, from_env.api_key) == ("https://memory.example.com", "mv_from_env")
    given = Orgmem("http://10.0.0.5:8080", "mv_given")
    assert (given.base_url, given.api_key) == ("http://10.0.0.5:8080", "mv_given")

    monkeypatch.delenv("ORGMEM_URL")
    assert Orgmem().base_url == DEFAULT_URL == "http://127.0.0.1:8080"
    monkeypatch.delenv("ORGMEM_API_KEY")
    with pytest.raises(ValueError, match="ORGMEM_API_KEY"):
        Orgmem()
    with pytest.raises(ValueError, match="http"):
        Orgmem("127.0.0.1:8080", "mv_given")
