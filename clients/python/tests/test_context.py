import pytest

from names import fresh_name
from orgmem import Orgmem, OrgmemError


def test_context_of_one_collection(client: Orgmem, collection: str) -> None:
    pinned = client.create_memory(collection, "The deploy window is Friday afternoon")
    client.pin_memory(collection, pinned["id"])
    milk = client.create_memory(collection, "Ana takes oat milk in her coffee")
    block = client.context("What milk does Ana take?", max_tokens=600, collection=collection)
    assert block["encoding"] == "o200k_base"
    assert 0 < block["tokens"] <= 600
    assert block["context"] == block["stable"]["text"] + block["query"]["text"]
    assert [(m["id"], m["pinned"]) for m in block["stable"]["memories"]] == [(pinned["id"], True)]
    assert milk["id"] in [m["id"] for m in block["query"]["memories"]]
    assert "Ana takes oat milk in her coffee" in block["context"]


def test_context_of_a_conversation_across_collections(client: Orgmem, collection: str, other_collection: str) -> None:
    word = fresh_name().replace("-", "")
    client.create_memory(collection, f"The {word} staging server is called ares")
    client.create_memory(other_collection, f"The {word} production servers run in Frankfurt")
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": f"Where do the {word} servers run?"},
    ]
    block = client.context(messages=messages, max_tokens=2000, mmr_lambda=1)
    assert {collection, other_collection} <= {m["collection"] for m in block["query"]["memories"]}
    only = client.context(messages=messages, max_tokens=2000, collection=other_collection)
    assert {m["collection"] for m in only["query"]["memories"]} == {other_collection}


def test_a_budget_out_of_range_is_422(client: Orgmem, collection: str) -> None:
    with pytest.raises(OrgmemError) as raised:
        client.context("anything", max_tokens=10, collection=collection)
    assert raised.value.status == 422
    assert [e["path"] for e in raised.value.errors] == ["max_tokens"]
