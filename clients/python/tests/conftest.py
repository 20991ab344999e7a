"""The tests run against a live orgmem: ORGMEM_URL and ORGMEM_API_KEY name it and the key.

The key must be an admin key (test_session.py reads the influence ledger) of a tenant with an LLM
endpoint (the chat proxy needs one): test/python-client.test.ts starts a server, gives a tenant a
fake endpoint, and runs them with its key. Each test works in collections of its own, so they
share the tenant.
"""

import os
from collections.abc import Iterator

import pytest

from names import fresh_name
from orgmem import Orgmem, OrgmemError


@pytest.fixture(scope="session")
def client() -> Orgmem:
    missing = [name for name in ("ORGMEM_URL", "ORGMEM_API_KEY") if not os.environ.get(name)]
    if missing:
        pytest.fail(f"Set {' and '.join(missing)}: these tests need a running orgmem and a key of it")
    return Orgmem()


def _made(client: Orgmem) -> Iterator[str]:
    name = fresh_name()
    yield name
    try:
        client.delete_collection(name)
    except OrgmemError as err:
        # A test may never have written to it, or deleted it itself.
        if err.status != 404:
            raise


@pytest.fixture
def collection(client: Orgmem) -> Iterator[str]:
    """A collection name no other test uses, deleted after the test."""
    yield from _made(client)


@pytest.fixture
def other_collection(client: Orgmem) -> Iterator[str]:
    yield from _made(client)
