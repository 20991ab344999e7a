"""The chat proxy: the key's tenant needs an LLM endpoint (test/python-client.test.ts gives it a fake one)."""

import json
import urllib.request

import pytest

from orgmem import Orgmem, OrgmemError


def test_the_headers_a_chat_app_sends() -> None:
    client = Orgmem("http://127.0.0.1:8080/", "mv_example")
    assert client.proxy_url == "http://127.0.0.1:8080/v1/proxy"
    assert client.proxy_headers() == {"Authorization": "Bearer mv_example", "Content-Type": "application/json"}
    assert client.proxy_headers(session="chat-42") == {
        "Authorization": "Bearer mv_example",
        "Content-Type": "application/json",
        "X-Orgmem-Session": "chat-42",
    }
    named = Orgmem("http://127.0.0.1:8080", "mv_example", session="app-7")
    assert named.proxy_headers()["X-Orgmem-Session"] == "app-7"
    assert named.proxy_headers(session="chat-42")["X-Orgmem-Session"] == "chat-42"


def test_a_request_with_those_headers_gets_memory(client: Orgmem, collection: str) -> None:
    client.create_memory(collection, "Ana prefers oat milk")
    body = {"messages": [{"role": "user", "content": "What milk does Ana like?"}], "collection": collection, "store": False}
    request = urllib.request.Request(f"{client.proxy_url}/chat/completions", data=json.dumps(body).encode(), headers=client.proxy_headers(session="chat-1"))
    with urllib.request.urlopen(request, timeout=60) as response:
        answer = json.load(response)
    assert isinstance(answer["choices"][0]["message"]["content"], str)
    assert [m["text"] for m in answer["memvault"]["memories_used"]] == ["Ana prefers oat milk"]
    assert answer["memvault"]["stored"] is False


def test_chat_completion_recalls_and_stores(client: Orgmem, collection: str) -> None:
    client.create_memory(collection, "The office moved to Porto")
    answer = client.chat_completion([{"role": "user", "content": "Where is the office?"}], collection=collection, memory_limit=3, temperature=0)
    assert answer["choices"][0]["message"]["role"] == "assistant"
    assert [(m["text"], m["collection"]) for m in answer["memvault"]["memories_used"]] == [("The office moved to Porto", collection)]
    assert answer["memvault"]["stored"] is True
    assert (answer["memvault"]["turns_dropped"], answer["memvault"]["memory_error"]) == (0, None)

    without = client.chat_completion([{"role": "user", "content": "Where is the office?"}], collection=collection, memory_limit=0, store=False)
    assert without["memvault"]["memories_used"] == []


def test_proxy_refusals(client: Orgmem, collection: str) -> None:
    with pytest.raises(ValueError):
        client.chat_completion([{"role": "user", "content": "Hi"}], stream=True)
    with pytest.raises(OrgmemError) as unknown_key:
        Orgmem(client.base_url, "mv_not_a_key").chat_completion([{"role": "user", "content": "Hi"}])
    assert unknown_key.value.status == 401
    with pytest.raises(OrgmemError) as no_messages:
        client.chat_completion([], collection=collection)
    assert no_messages.value.status == 422
    assert [e["path"] for e in no_messages.value.errors] == ["messages"]
