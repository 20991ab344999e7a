import uuid

import pytest

from orgmem import Orgmem, OrgmemError


def test_create_get_update_delete(client: Orgmem, collection: str) -> None:
    made = client.create_memory(
        collection,
        "We ship on Thursdays",
        importance=0.8,
        category="decision",
        source="python-test",
        metadata={"ticket": 12},
        container_tag="ops",
        observed_at="2026-11-20T09:00:00+01:00",
    )
    assert made["collection"] == collection
    assert (made["text"], made["importance"], made["category"], made["source"]) == ("We ship on Thursdays", 0.8, "decision", "python-test")
    assert made["metadata"] == {"ticket": 12}
    assert made["container_tag"] == "ops"
    assert made["observed_at"] == "2026-11-20T08:00:00.000Z"
    assert made["images"] == [] and made["pinned"] is False and made["archived"] is False

    got = client.get_memory(collection, made["id"])
    assert got["text"] == "We ship on Thursdays"
    assert got["use"]["recalls"] >= 0 and got["use"]["confirmations"] == 0

    changed = client.update_memory(collection, made["id"], text="We ship on Fridays", importance=0.9)
    assert (changed["text"], changed["importance"], changed["category"]) == ("We ship on Fridays", 0.9, "decision")

    client.delete_memory(collection, made["id"])
    with pytest.raises(OrgmemError) as raised:
        client.get_memory(collection, made["id"])
    assert raised.value.status == 404


def test_defaults_and_absent_fields(client: Orgmem, collection: str) -> None:
    made = client.create_memory(collection, "Standup is at 9:30")
    assert (made["importance"], made["category"], made["source"], made["container_tag"], made["metadata"]) == (0.5, "other", "api", None, {})


def test_bulk_answers_the_ids_in_order(client: Orgmem, collection: str) -> None:
    bulk = client.create_memories(collection, ["Standup is at 9:30", {"text": "Cleo owns the payroll runbook", "category": "owner", "container_tag": "ops"}])
    assert bulk["created"] == 2
    first, second = (client.get_memory(collection, i) for i in bulk["ids"])
    assert (first["text"], first["category"]) == ("Standup is at 9:30", "other")
    assert (second["text"], second["category"], second["container_tag"]) == ("Cleo owns the payroll runbook", "owner", "ops")


def test_a_bad_item_of_a_bulk_is_named_by_its_index(client: Orgmem, collection: str) -> None:
    with pytest.raises(OrgmemError) as raised:
        client.create_memories(collection, ["fine", {"text": ""}])
    assert raised.value.status == 422
    assert [e["path"] for e in raised.value.errors] == ["1.text"]
    # Nothing was stored, not even the collection.
    with pytest.raises(OrgmemError) as listing:
        client.list_memories(collection)
    assert listing.value.status == 404


def test_list_filters_and_pages(client: Orgmem, collection: str) -> None:
    ids = client.create_memories(
        collection,
        [{"text": f"Decision {n}", "category": "decision"} for n in range(3)] + [{"text": "A note", "container_tag": "ops"}],
    )["ids"]
    # Newest first.
    assert [m["id"] for m in client.list_memories(collection)] == list(reversed(ids))
    assert [m["text"] for m in client.list_memories(collection, category="decision", limit=2)] == ["Decision 2", "Decision 1"]
    assert [m["text"] for m in client.list_memories(collection, category="decision", limit=2, offset=2)] == ["Decision 0"]
    assert [m["text"] for m in client.list_memories(collection, container_tag="ops")] == ["A note"]


def test_pin_archive_and_move(client: Orgmem, collection: str, other_collection: str) -> None:
    older, newer = client.create_memories(collection, ["Pinned later", "Newest"])["ids"]
    assert client.pin_memory(collection, older)["pinned"] is True
    assert [m["id"] for m in client.list_memories(collection)] == [older, newer]
    assert [m["id"] for m in client.list_memories(collection, pinned=True)] == [older]
    assert client.pin_memory(collection, older, pinned=False)["pinned"] is False

    assert client.archive_memory(collection, newer)["archived"] is True
    assert [m["id"] for m in client.list_memories(collection)] == [older]
    assert [m["id"] for m in client.list_memories(collection, archived=True)] == [newer]
    assert len(client.list_memories(collection, include_archived=True)) == 2
    assert client.archive_memory(collection, newer, archived=False)["archived"] is False

    moved = client.move_memory(collection, older, other_collection)
    assert moved["collection"] == other_collection
    assert [m["id"] for m in client.list_memories(other_collection)] == [older]
    with pytest.raises(OrgmemError) as raised:
        client.move_memory(other_collection, older, other_collection)
    assert raised.value.status == 400
    assert raised.value.detail


def test_invalid_fields_are_422_naming_each(client: Orgmem, collection: str) -> None:
    with pytest.raises(OrgmemError) as raised:
        client.create_memory(collection, "", importance=2)
    assert raised.value.status == 422
    assert sorted(e["path"] for e in raised.value.errors) == ["importance", "text"]
    with pytest.raises(OrgmemError) as limit:
        client.list_memories(collection, limit=500)
    assert limit.value.status == 422
    assert [e["path"] for e in limit.value.errors] == ["limit"]


def test_an_unknown_or_malformed_id_is_404(client: Orgmem, collection: str) -> None:
    client.create_memory(collection, "Something to find the collection by")
    for memory_id in (str(uuid.uuid4()), "not-a-uuid"):
        with pytest.raises(OrgmemError) as raised:
            client.get_memory(collection, memory_id)
        assert raised.value.status == 404
        assert raised.value.detail
