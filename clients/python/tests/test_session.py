import time

from names import fresh_name
from orgmem import Orgmem


def test_a_named_session_reaches_the_influence_ledger(client: Orgmem, collection: str) -> None:
    memory = client.create_memory(collection, "The on-call rotation changes on Mondays")
    session = fresh_name()
    named = Orgmem(client.base_url, client.api_key, session=session)
    assert named.search(collection, "on-call rotation", mode="text")["results"][0]["id"] == memory["id"]
    # The ledger is written in batches, about every second.
    deadline = time.monotonic() + 20
    while not (entries := client.request("GET", "/v1/memory/ledger", query={"session_id": session})["entries"]):
        assert time.monotonic() < deadline, "the search never reached the ledger"
        time.sleep(0.2)
    assert [(e["session_id"], e["procedure"], [m["id"] for m in e["memories"]]) for e in entries] == [(session, "search.collection", [memory["id"]])]
