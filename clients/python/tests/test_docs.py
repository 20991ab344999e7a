"""The Python blocks of the client's README and of docs/python.md, run in order against the live server.

Each page's blocks share one namespace, as a reader's session would; the values they leave behind
and what they print are checked here.
"""

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest

from orgmem import Orgmem, OrgmemError

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "clients" / "python" / "README.md"
PAGE = ROOT / "docs" / "python.md"
MARKER = "<!-- not-run: run by clients/python/tests/test_docs.py against a live server -->"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def python_blocks(page: Path) -> list[str]:
    """The page's Python blocks; each must carry the marker saying this file runs it, and only they may."""
    text = page.read_text(encoding="utf-8")
    blocks = []
    for fence in FENCE.finditer(text):
        marked = text[: fence.start()].rstrip("\n").rsplit("\n", 1)[-1] == MARKER
        assert marked == (fence.group(1) == "python"), f"{page.name}, offset {fence.start()}: a block run here is a Python block with the marker"
        if marked:
            blocks.append(fence.group(2))
    assert blocks, f"{page.name} has no Python block"
    return blocks


def run_page(page: Path) -> tuple[dict[str, Any], str]:
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for number, code in enumerate(python_blocks(page), 1):
            exec(compile(code, f"{page.name}, Python block {number}", "exec"), namespace)
    return namespace, printed.getvalue()


@pytest.fixture(autouse=True)
def in_a_directory_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A block may write a file to read it back.
    monkeypatch.chdir(tmp_path)


def gone(client: Orgmem, collection: str) -> bool:
    try:
        client.get_collection(collection)
    except OrgmemError as err:
        return err.status == 404
    return False


def test_the_readme(client: Orgmem) -> None:
    ns, printed = run_page(README)
    assert printed.startswith("Ana prefers oat milk\n")
    assert "The office moved to Porto." in printed
    assert ns["memory"]["text"] == "Renew the domain before May."
    assert "/v1/blobs/" in printed
    assert "\n404 " in printed
    assert gone(client, "notes")


def test_the_docs_page(client: Orgmem) -> None:
    ns, printed = run_page(PAGE)
    # Collections and memories
    assert (ns["team"]["name"], ns["team"]["description"]) == ("team", "What the team decided")
    assert ns["bulk"]["created"] == 2
    assert [m["text"] for m in ns["decisions"]] == ["We ship on Thursdays"]
    # Search
    assert ns["found"]["results"][0]["text"] == "We ship on Thursdays"
    assert ns["everywhere"]["results"][0]["collection"] == "team"
    # Remember
    assert sorted(f["type"] for f in ns["facts"]["memories"]) == ["fact", "preference"]
    assert (ns["done"]["state"], [f["text"] for f in ns["done"]["facts"]]) == ("done", ["Ben is allergic to peanuts."])
    # Context
    assert ns["block"]["tokens"] <= 800 and "oat milk" in ns["block"]["context"]
    assert "Ana owns the billing runbook" in ns["recalled"]["context"]
    # Files
    assert ns["memory"]["text"] == "New people get a laptop on day one."
    assert ns["data"] == b"New people get a laptop on day one."
    assert (ns["dropped"]["stored"], ns["batch"]["done"]) == (1, 1)
    # The chat proxy
    assert ns["headers"]["X-Orgmem-Session"] == "chat-42"
    assert any("oat milk" in m["text"] for m in ns["answer"]["memvault"]["memories_used"])
    assert ns["reply"]["memvault"]["stored"] is False
    # Errors
    assert "\n404 " in printed
    assert "\n422 [{'path': 'text'" in printed
    assert "\nunreachable: " in printed
    assert gone(client, "team")
