"""The client: one method per operation of orgmem's REST API (`/v1`)."""

from __future__ import annotations

import json
import os
import time
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any, Unpack
from urllib.parse import quote, urlencode

from .files import File, multipart
from .options import ContextOptions, SearchOptions
from .transport import parse_json, send
from .types import (
    BulkCreated,
    ChatCompletion,
    Collection,
    Context,
    DropResult,
    ExtractionJob,
    FileEntry,
    IngestBatch,
    Memory,
    MemoryWithUse,
    NewMemory,
    QueuedDrop,
    RememberJob,
    RememberResult,
    SearchResponse,
)

DEFAULT_URL = "http://127.0.0.1:8080"
# The header that names the caller's session in the influence ledger (docs/trust.md).
SESSION_HEADER = "X-Orgmem-Session"
USER_AGENT = "orgmem-python"

# update_collection's description: None clears it, so "left out" needs a value of its own.
_UNSET: Any = object()


def _path(segment: str) -> str:
    # Names and ids are checked by the service; quoting keeps any text one path segment.
    return quote(segment, safe="")


def _collection(name: str) -> str:
    return f"/v1/memory/collections/{_path(name)}"


def _memory(collection: str, memory_id: str) -> str:
    return f"{_collection(collection)}/memories/{_path(memory_id)}"


def _fields(**values: Any) -> dict[str, Any]:
    """The fields the caller gave: a None is left out, so the service's default applies."""
    return {k: v for k, v in values.items() if v is not None}


def _query_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Orgmem:
    """A client of one orgmem server with one API key.

    `base_url` and `api_key` default to the environment's `ORGMEM_URL` and `ORGMEM_API_KEY`
    (the URL to http://127.0.0.1:8080). `session` names the caller's session on every call
    (the `X-Orgmem-Session` header, recorded in the influence ledger). Every method raises
    OrgmemError when the service answers an error, OrgmemConnectionError when no answer comes.
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        session: str | None = None,
        timeout: float = 60.0,
    ) -> None:
        url = (base_url or os.environ.get("ORGMEM_URL") or DEFAULT_URL).rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"The orgmem URL must be http(s), such as {DEFAULT_URL}: {url!r}")
        key = api_key or os.environ.get("ORGMEM_API_KEY")
        if not key:
            raise ValueError("No orgmem API key: pass api_key or set ORGMEM_API_KEY")
        self.base_url = url
        self.api_key = key
        self.session = session
        self.timeout = timeout

    # -- HTTP ---------------------------------------------------------------------------------

    def _credentials(self, session: str | None = None) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.api_key}"}
        named = session or self.session
        if named:
            headers[SESSION_HEADER] = named
        return headers

    def _headers(self) -> dict[str, str]:
        return {**self._credentials(), "Accept": "application/json", "User-Agent": USER_AGENT}

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Any operation of /openapi.json: its `path` (`/v1/...`), query and JSON `body`; the
        answer's JSON, None for a 204."""
        data = None if body is None else json.dumps(body).encode()
        return self._exchange(method, path, query, data, "application/json" if data else None, headers)

    def _upload(self, path: str, fields: Mapping[str, Any], files: File | Sequence[File], query: Mapping[str, Any] | None = None) -> Any:
        # Multipart fields are text: an object goes as its JSON, which the service reads back.
        text = {k: json.dumps(v) if isinstance(v, dict) else _query_text(v) for k, v in fields.items() if v is not None}
        data, content_type = multipart(text, [files] if isinstance(files, File) else files)
        return self._exchange("POST", path, query, data, content_type)

    def _exchange(
        self,
        method: str,
        path: str,
        query: Mapping[str, Any] | None,
        data: bytes | None,
        content_type: str | None,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        url = self.base_url + path
        text = urlencode({k: _query_text(v) for k, v in (query or {}).items() if v is not None})
        if text:
            url += f"?{text}"
        sent = self._headers()
        if content_type:
            sent["Content-Type"] = content_type
        sent.update(headers or {})
        return parse_json(send(urllib.request.Request(url, data=data, headers=sent, method=method), self.timeout))

    # -- Collections --------------------------------------------------------------------------

    def list_collections(self) -> list[Collection]:
        return self.request("GET", "/v1/memory/collections")

    def create_collection(self, name: str, *, description: str | None = None, metadata: dict[str, Any] | None = None) -> Collection:
        """A new collection (409 when the name exists; a first write into a name creates one too)."""
        return self.request("POST", "/v1/memory/collections", body=_fields(name=name, description=description, metadata=metadata))

    def get_collection(self, name: str) -> Collection:
        return self.request("GET", _collection(name))

    def update_collection(self, name: str, *, description: str | None = _UNSET, metadata: dict[str, Any] | None = None) -> Collection:
        """Changes what is given; `description=None` clears the description."""
        body = _fields(metadata=metadata)
        if description is not _UNSET:
            body["description"] = description
        return self.request("PUT", _collection(name), body=body)

    def delete_collection(self, name: str) -> None:
        """Deletes the collection with its memories and their files."""
        self.request("DELETE", _collection(name))

    # -- Memories -----------------------------------------------------------------------------

    def create_memory(
        self,
        collection: str,
        text: str,
        *,
        importance: float | None = None,
        category: str | None = None,
        source: str | None = None,
        metadata: dict[str, Any] | None = None,
        container_tag: str | None = None,
        observed_at: str | None = None,
        valid_from: str | None = None,
        valid_to: str | None = None,
    ) -> Memory:
        body = _fields(
            text=text,
            importance=importance,
            category=category,
            source=source,
            metadata=metadata,
            container_tag=container_tag,
            observed_at=observed_at,
            valid_from=valid_from,
            valid_to=valid_to,
        )
        return self.request("POST", f"{_collection(collection)}/memories", body=body)

    def create_memories(self, collection: str, items: Sequence[NewMemory | str]) -> BulkCreated:
        """1 to 100 memories in one call (a text alone is `{"text": ...}`); the ids come in the same order."""
        body = [{"text": item} if isinstance(item, str) else item for item in items]
        return self.request("POST", f"{_collection(collection)}/memories/bulk", body=body)

    def get_memory(self, collection: str, memory_id: str) -> MemoryWithUse:
        """The memory, its files with presigned URLs, and how often it was recalled."""
        return self.request("GET", _memory(collection, memory_id))

    def list_memories(
        self,
        collection: str,
        *,
        limit: int | None = None,
        offset: int | None = None,
        include_archived: bool | None = None,
        category: str | None = None,
        container_tag: str | None = None,
        pinned: bool | None = None,
        archived: bool | None = None,
    ) -> list[Memory]:
        """Pinned memories first, then the newest; `limit` 1 to 200 (default 50), paged by `offset`."""
        query = _fields(
            limit=limit,
            offset=offset,
            include_archived=include_archived,
            category=category,
            container_tag=container_tag,
            pinned=pinned,
            archived=archived,
        )
        return self.request("GET", f"{_collection(collection)}/memories", query=query)

    def update_memory(
        self,
        collection: str,
        memory_id: str,
        *,
        text: str | None = None,
        importance: float | None = None,
        category: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Memory:
        """Changes only the fields given; a new text is embedded again."""
        body = _fields(text=text, importance=importance, category=category, metadata=metadata)
        return self.request("PATCH", _memory(collection, memory_id), body=body)

    def delete_memory(self, collection: str, memory_id: str) -> None:
        self.request("DELETE", _memory(collection, memory_id))

    def pin_memory(self, collection: str, memory_id: str, pinned: bool = True) -> Memory:
        """Pinned memories list first and are part of every context block."""
        return self.request("POST", f"{_memory(collection, memory_id)}/pin", body={"pinned": pinned})

    def archive_memory(self, collection: str, memory_id: str, archived: bool = True) -> Memory:
        """Hides the memory from search and listings without deleting it (`archived=False` brings it back)."""
        return self.request("POST", f"{_memory(collection, memory_id)}/archive", body={"archived": archived})

    def move_memory(self, collection: str, memory_id: str, to_collection: str) -> Memory:
        return self.request("POST", f"{_memory(collection, memory_id)}/move", body={"to_collection": to_collection})

    # -- Search -------------------------------------------------------------------------------

    def search(self, collection: str, query: str, **options: Unpack[SearchOptions]) -> SearchResponse:
        """The memories of one collection that best match `query` (hybrid by default, 5 results)."""
        return self.request("POST", f"{_collection(collection)}/search", body={"query": query, **options})

    def search_all(self, query: str, *, collection: str | None = None, **options: Unpack[SearchOptions]) -> SearchResponse:
        """The best matches in every collection the key may read (or in `collection`); each result names its collection."""
        return self.request("POST", "/v1/memory/search", body={"query": query, **_fields(collection=collection), **options})

    # -- Remember -----------------------------------------------------------------------------

    def remember(
        self,
        collection: str,
        content: str,
        *,
        importance: float | None = None,
        observed_at: str | None = None,
        idempotency_key: str | None = None,
    ) -> RememberJob:
        """Stores the text and queues the extraction of its facts; the job says how it went.

        The same `idempotency_key` with the same text answers the first job and stores nothing,
        so a call that timed out can be sent again.
        """
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        body = _fields(content=content, importance=importance, observed_at=observed_at)
        return self.request("POST", f"{_collection(collection)}/remember", body=body, headers=headers)

    def remember_sync(self, collection: str, content: str, *, importance: float | None = None, observed_at: str | None = None) -> RememberResult:
        """Stores the text and extracts its facts inside the request: the facts as stored."""
        body = _fields(content=content, importance=importance, observed_at=observed_at)
        return self.request("POST", f"{_collection(collection)}/remember", query={"sync": True}, body=body)

    def extraction_job(self, job_id: str) -> ExtractionJob:
        return self.request("GET", f"/v1/memory/extract/job/{_path(job_id)}")

    def wait_for_job(self, job_id: str, *, timeout: float = 60.0, interval: float = 0.5) -> ExtractionJob:
        """The job once it is done or failed; TimeoutError if it is not within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not (job := self.extraction_job(job_id))["complete"]:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"Extraction job {job_id} is still {job['state']} after {timeout:g} s")
            time.sleep(interval)
        return job

    # -- Context ------------------------------------------------------------------------------

    def context(self, query: str | None = None, *, max_tokens: int, collection: str | None = None, **options: Unpack[ContextOptions]) -> Context:
        """One block of memory for a prompt, within `max_tokens` (128 to 32,000).

        From every collection the key may read, or from `collection`; for `query` or for a
        conversation (`messages=[...]`, its latest user message being the query).
        """
        body = {**_fields(query=query), "max_tokens": max_tokens, **options}
        if collection is None:
            return self.request("POST", "/v1/memory/context", body=body)
        return self.request("POST", f"{_collection(collection)}/context", body=body)

    # -- Files --------------------------------------------------------------------------------

    def upload_file(
        self,
        collection: str,
        files: File | Sequence[File],
        *,
        text: str | None = None,
        importance: float | None = None,
        category: str | None = None,
        container_tag: str | None = None,
        metadata: dict[str, Any] | None = None,
        observed_at: str | None = None,
    ) -> Memory:
        """One memory with the files attached; without `text`, its text is what the files hold (at most 10,000 characters)."""
        fields = _fields(
            text=text,
            importance=importance,
            category=category,
            container_tag=container_tag,
            metadata=metadata,
            observed_at=observed_at,
        )
        return self._upload(f"{_collection(collection)}/memories/upload", fields, files)

    def attach_files(self, collection: str, memory_id: str, files: File | Sequence[File]) -> Memory:
        """Adds files to a memory; the answer lists them with presigned URLs."""
        return self._upload(f"{_memory(collection, memory_id)}/images", {}, files)

    def list_files(self, collection: str, memory_id: str) -> list[FileEntry]:
        """The files of a memory, each with a presigned URL valid 15 minutes."""
        return self.get_memory(collection, memory_id)["images"]

    def get_file(self, collection: str, memory_id: str, index: int) -> bytes:
        """The bytes of a memory's file (`index` as `list_files` gives it)."""
        entry = next((f for f in self.list_files(collection, memory_id) if f["index"] == index), None)
        if entry is None or entry["url"] is None:
            raise LookupError(f"Memory {memory_id} has no file at index {index}")
        return self.download(entry["url"])

    def download(self, url: str) -> bytes:
        """The file at a presigned URL. The URL is its own credential, and may be another host's (the
        tenant's S3 bucket), so the API key is not sent."""
        return send(urllib.request.Request(url, headers={"User-Agent": USER_AGENT}), self.timeout)

    def delete_file(self, collection: str, memory_id: str, index: int) -> None:
        """Detaches the file from the memory and removes it from the file store."""
        self.request("DELETE", f"{_memory(collection, memory_id)}/images/{int(index)}")

    def drop_files(self, collection: str, files: File | Sequence[File]) -> DropResult:
        """Reads each file, splits its text into chunks and stores each chunk as a memory; answers when all are read.
        Raises OrgmemError 422 when no file could be stored."""
        return self._upload(f"{_collection(collection)}/drop", {}, files)

    def drop_files_async(self, collection: str, files: File | Sequence[File]) -> QueuedDrop:
        """As drop_files, but queued for the worker: follow the batch with `ingest_batch` or `wait_for_batch`."""
        return self._upload(f"{_collection(collection)}/drop", {}, files, query={"async_ingest": True})

    def ingest_batch(self, batch_id: str) -> IngestBatch:
        return self.request("GET", f"/v1/memory/ingest/batch/{_path(batch_id)}")

    def wait_for_batch(self, batch_id: str, *, timeout: float = 120.0, interval: float = 0.5) -> IngestBatch:
        """The batch once no file is pending; TimeoutError if one still is after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not (batch := self.ingest_batch(batch_id))["complete"]:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"Batch {batch_id} still has {batch['pending']} files pending after {timeout:g} s")
            time.sleep(interval)
        return batch

    # -- The chat proxy -----------------------------------------------------------------------

    @property
    def proxy_url(self) -> str:
        """The base URL to give an OpenAI client: it adds `/chat/completions` itself."""
        return f"{self.base_url}/v1/proxy"

    def proxy_headers(self, session: str | None = None) -> dict[str, str]:
        """The headers a chat app sends with each request to the proxy: the key as a bearer token,
        the JSON content type and, when there is one, the session for the influence ledger.
        orgmem's own options (`collection`, `store`...) go in the body: see `chat_completion`."""
        return {**self._credentials(session), "Content-Type": "application/json"}

    def chat_completion(
        self,
        messages: list[dict[str, Any]],
        *,
        collection: str | None = None,
        container_tag: str | None = None,
        memory_limit: int | None = None,
        memory_tokens: int | None = None,
        store: bool | None = None,
        max_thread_tokens: int | None = None,
        session: str | None = None,
        **openai_fields: Any,
    ) -> ChatCompletion:
        """A chat completion through orgmem's proxy: the memories relevant to the latest user message
        go to the model, and the user's words are queued for remember unless `store=False`.

        `openai_fields` (`model`, `temperature`, `tools`...) go to the LLM endpoint as given; the
        answer is the endpoint's completion plus `memvault` (what orgmem added). Not streamed.
        """
        if openai_fields.get("stream"):
            raise ValueError("chat_completion does not stream: leave stream out, or use an OpenAI client with proxy_url")
        body = {
            "messages": messages,
            **_fields(
                collection=collection,
                container_tag=container_tag,
                memory_limit=memory_limit,
                memory_tokens=memory_tokens,
                store=store,
                max_thread_tokens=max_thread_tokens,
            ),
            **openai_fields,
        }
        return self.request("POST", "/v1/proxy/chat/completions", body=body, headers=self._credentials(session))

    def __repr__(self) -> str:
        return f"Orgmem({self.base_url!r})"

