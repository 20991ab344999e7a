import pytest

from names import fresh_name
from orgmem import Orgmem, OrgmemError


def test_search_one_collection(client: Orgmem, collection: str) -> None:
    milk = client.create_memory(collection, "Ana prefers oat milk in her coffee", category="preference")
    client.create_memories(collection, ["The release train leaves on Tuesdays", "Ben rides a red bicycle"])
    found = client.search(collection, "oat milk", limit=2)
    assert found["results"][0]["id"] == milk["id"]
    assert found["results"][0]["text"] == "Ana prefers oat milk in her coffee"
    assert 0 < found["results"][0]["score"] <= 1
    assert len(found["results"]) <= 2
    assert isinstance(found["cached"], bool) and found["search_ms"] >= 0
    # One collection's results do not name it.
    assert "collection" not in found["results"][0]


def test_search_options_reach_the_service(client: Orgmem, collection: str) -> None:
    client.create_memory(collection, "Tabs over spaces in the payments repo", category="preference", metadata={"repo": "payments"})
    client.create_memory(collection, "Tabs over spaces in the web repo", category="fact", metadata={"repo": "web"})
    texts = lambda **options: [r["text"] for r in client.search(collection, "tabs spaces", mode="text", **options)["results"]]  # noqa: E731
    assert texts(category="preference") == ["Tabs over spaces in the payments repo"]
    assert texts(metadata_filter={"repo": "web"}) == ["Tabs over spaces in the web repo"]
    assert sorted(texts(limit=5)) == ["Tabs over spaces in the payments repo", "Tabs over spaces in the web repo"]


def test_search_every_collection(client: Orgmem, collection: str, other_collection: str) -> None:
    word = fresh_name().replace("-", "")
    client.create_memory(collection, f"The {word} project ships in March")
    client.create_memory(other_collection, f"The {word} project has two engineers")
    everywhere = client.search_all(word, mode="text", limit=10)
    assert sorted(r["collection"] for r in everywhere["results"]) == sorted([collection, other_collection])
    only = client.search_all(word, mode="text", collection=other_collection)
    assert [(r["collection"], r["text"]) for r in only["results"]] == [(other_collection, f"The {word} project has two engineers")]


def test_a_search_out_of_range_is_422(client: Orgmem, collection: str) -> None:
    client.create_memory(collection, "Something to search")
    with pytest.raises(OrgmemError) as raised:
        client.search(collection, "something", limit=0)
    assert raised.value.status == 422
    assert [e["path"] for e in raised.value.errors] == ["limit"]
    with pytest.raises(OrgmemError) as empty:
        client.search_all("")
    assert empty.value.status == 422
    assert [e["path"] for e in empty.value.errors] == ["query"]
