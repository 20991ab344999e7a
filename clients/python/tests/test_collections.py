import pytest

from orgmem import Orgmem, OrgmemError

from names import fresh_name


def test_create_get_list_update_delete(client: Orgmem, collection: str) -> None:
    made = client.create_collection(collection, description="What the team decided", metadata={"team": "payments"})
    assert made["name"] == collection
    assert made["description"] == "What the team decided"
    assert made["metadata"] == {"team": "payments"}
    assert (made["memory_count"], made["archived_count"]) == (0, 0)

    assert client.get_collection(collection) == made
    assert collection in [c["name"] for c in client.list_collections()]

    changed = client.update_collection(collection, description="Decisions and owners")
    assert changed["description"] == "Decisions and owners"
    assert changed["metadata"] == {"team": "payments"}
    assert client.update_collection(collection, description=None)["description"] is None

    client.delete_collection(collection)
    assert collection not in [c["name"] for c in client.list_collections()]


def test_counts_follow_the_writes(client: Orgmem, collection: str) -> None:
    client.create_memories(collection, ["one", "two", "three"])
    assert client.get_collection(collection)["memory_count"] == 3


def test_a_name_that_exists_is_409(client: Orgmem, collection: str) -> None:
    client.create_collection(collection)
    with pytest.raises(OrgmemError) as raised:
        client.create_collection(collection)
    assert raised.value.status == 409
    assert collection in raised.value.detail


def test_a_missing_collection_is_404_with_the_services_detail(client: Orgmem) -> None:
    name = fresh_name()
    with pytest.raises(OrgmemError) as raised:
        client.get_collection(name)
    err = raised.value
    assert err.status == 404
    assert name in err.detail
    assert str(err) == f"404: {err.detail}"
    assert err.method == "GET" and err.url.endswith(f"/v1/memory/collections/{name}")
    with pytest.raises(OrgmemError) as deleting:
        client.delete_collection(name)
    assert deleting.value.status == 404


def test_an_invalid_name_is_422_naming_the_field(client: Orgmem) -> None:
    with pytest.raises(OrgmemError) as raised:
        client.create_collection("no spaces allowed")
    assert raised.value.status == 422
    assert [e["path"] for e in raised.value.errors] == ["name"]
    assert "name: " in str(raised.value)
