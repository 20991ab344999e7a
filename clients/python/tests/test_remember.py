import pytest

from orgmem import Orgmem, OrgmemError


def test_remember_sync_answers_the_facts(client: Orgmem, collection: str) -> None:
    answer = client.remember_sync(collection, "Ana prefers oat milk. The office is in Porto.")
    assert answer["created"] == 2
    assert answer["skipped"] is None
    assert sorted((f["type"], f["relation"]) for f in answer["memories"]) == [("fact", "new"), ("preference", "new")]
    stored = {m["id"]: m for m in client.list_memories(collection)}
    assert {f["id"] for f in answer["memories"]} <= set(stored)


def test_remember_queues_a_job_and_the_job_ends_done(client: Orgmem, collection: str) -> None:
    job = client.remember(collection, "Ben is allergic to peanuts.", importance=0.9)
    assert job["state"] == "queued"
    done = client.wait_for_job(job["job_id"], timeout=60)
    assert (done["state"], done["complete"], done["error"], done["collection"]) == ("done", True, None, collection)
    assert [f["text"] for f in done["facts"]] == ["Ben is allergic to peanuts."]
    fact = client.get_memory(collection, done["facts"][0]["id"])
    assert (fact["category"], fact["importance"]) == ("fact", 0.9)
    # The raw text is kept, archived once its facts exist.
    assert client.get_memory(collection, done["memory_id"])["archived"] is True


def test_the_same_idempotency_key_answers_the_first_job(client: Orgmem, collection: str) -> None:
    first = client.remember(collection, "Cleo leads the data team.", idempotency_key=f"turn-{collection}")
    again = client.remember(collection, "Cleo leads the data team.", idempotency_key=f"turn-{collection}")
    assert again["job_id"] == first["job_id"]
    with pytest.raises(OrgmemError) as other_body:
        client.remember(collection, "Cleo leads the web team.", idempotency_key=f"turn-{collection}")
    assert other_body.value.status == 422
    assert [e["path"] for e in other_body.value.errors] == ["idempotency_key"]


def test_a_job_not_there_is_404_and_empty_content_422(client: Orgmem, collection: str) -> None:
    with pytest.raises(OrgmemError) as missing:
        client.extraction_job("00000000-0000-7000-8000-000000000000")
    assert missing.value.status == 404
    with pytest.raises(OrgmemError) as empty:
        client.remember(collection, "")
    assert empty.value.status == 422
    assert [e["path"] for e in empty.value.errors] == ["content"]
