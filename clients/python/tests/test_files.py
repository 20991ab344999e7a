from pathlib import Path

import pytest

from orgmem import File, Orgmem, OrgmemError

HANDBOOK = b"# Handbook\n\nExpenses are filed by the fifth of each month.\n\nLaptops are replaced every three years.\n"


def test_upload_list_get_delete(client: Orgmem, collection: str) -> None:
    memory = client.upload_file(collection, File("handbook.md", HANDBOOK, "text/markdown"))
    # Without a text of its own, the memory's text is what the file holds.
    assert "Expenses are filed by the fifth of each month." in memory["text"]
    assert (memory["category"], memory["source"]) == ("document", "upload")
    assert [(f["index"], f["filename"], f["size"]) for f in memory["images"]] == [(0, "handbook.md", len(HANDBOOK))]

    files = client.list_files(collection, memory["id"])
    assert [f["filename"] for f in files] == ["handbook.md"]
    assert files[0]["url"] and files[0]["content_type"].startswith("text/markdown")
    assert client.get_file(collection, memory["id"], files[0]["index"]) == HANDBOOK

    attached = client.attach_files(collection, memory["id"], [File("a.txt", b"first"), File("b.txt", b"second", "text/plain")])
    assert [f["filename"] for f in attached["images"]] == ["handbook.md", "a.txt", "b.txt"]
    assert client.get_file(collection, memory["id"], 2) == b"second"

    client.delete_file(collection, memory["id"], 0)
    left = client.list_files(collection, memory["id"])
    assert [f["filename"] for f in left] == ["a.txt", "b.txt"]
    with pytest.raises(LookupError):
        client.get_file(collection, memory["id"], 9)
    with pytest.raises(OrgmemError) as raised:
        client.delete_file(collection, memory["id"], 9)
    assert raised.value.status == 404


def test_upload_with_fields_and_a_file_from_disk(client: Orgmem, collection: str, tmp_path: Path) -> None:
    path = tmp_path / "café menu.txt"
    path.write_text("Flat white: 3.20 €", encoding="utf-8")
    attached = File.from_path(path)
    assert (attached.filename, attached.content_type) == ("café menu.txt", "text/plain")
    memory = client.upload_file(
        collection,
        attached,
        text="The café's prices, autumn menu",
        importance=0.7,
        category="menu",
        container_tag="lisbon",
        metadata={"season": "autumn", "items": 1},
        observed_at="2026-10-01T08:00:00Z",
    )
    assert (memory["text"], memory["importance"], memory["category"], memory["container_tag"]) == ("The café's prices, autumn menu", 0.7, "menu", "lisbon")
    assert memory["metadata"]["season"] == "autumn" and memory["metadata"]["items"] == 1
    assert memory["observed_at"] == "2026-10-01T08:00:00.000Z"
    assert memory["images"][0]["filename"] == "café menu.txt"
    assert client.get_file(collection, memory["id"], 0) == "Flat white: 3.20 €".encode()


def test_drop_reads_files_into_memories(client: Orgmem, collection: str) -> None:
    dropped = client.drop_files(collection, [File("handbook.md", HANDBOOK, "text/markdown"), File("empty.txt", b"", "text/plain")])
    assert (dropped["stored"], dropped["failed"]) == (1, 1)
    stored, failed = dropped["files"]
    assert (stored["filename"], stored["status"]) == ("handbook.md", "stored")
    assert stored["memory_ids"] and stored["preview"].startswith("# Handbook")
    assert (failed["filename"], failed["status"]) == ("empty.txt", "failed") and failed["detail"]
    chunk = client.get_memory(collection, stored["memory_ids"][0])
    assert chunk["category"] == "document" and "Laptops are replaced every three years." in chunk["text"]


def test_drop_async_and_its_batch(client: Orgmem, collection: str) -> None:
    queued = client.drop_files_async(collection, File("handbook.md", HANDBOOK, "text/markdown"))
    assert (queued["queued"], queued["failed"]) == (1, [])
    batch = client.wait_for_batch(queued["batch_id"], timeout=60)
    assert (batch["collection"], batch["total"], batch["done"], batch["failed"], batch["pending"]) == (collection, 1, 1, 0, 0)
    assert batch["files"][0]["state"] == "done"
    assert [m["id"] for m in client.list_memories(collection)] == batch["files"][0]["memory_ids"]


def test_refusals(client: Orgmem, collection: str) -> None:
    with pytest.raises(OrgmemError) as nothing:
        client.upload_file(collection, [])
    assert nothing.value.status == 400
    with pytest.raises(OrgmemError) as unreadable:
        client.drop_files(collection, File("empty.txt", b"", "text/plain"))
    assert unreadable.value.status == 422
    assert [e["path"] for e in unreadable.value.errors] == ["files.0"]
    with pytest.raises(OrgmemError) as batch:
        client.ingest_batch("00000000-0000-7000-8000-000000000000")
    assert batch.value.status == 404
