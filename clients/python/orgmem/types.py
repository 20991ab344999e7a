"""The objects orgmem answers, as /openapi.json describes them.

They are TypedDicts: what the client returns is the JSON answer itself, so a field the service
adds later is there too, and the types only tell a type checker (and the reader) what to expect.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

Trust = Literal["user", "agent", "tool", "document", "mail", "connector", "import"]
Scope = Literal["org", "team", "personal"]


class Collection(TypedDict):
    name: str
    description: str | None
    metadata: dict[str, Any]
    memory_count: int
    archived_count: int
    restricted: bool
    scope: Scope
    owner: str | None
    teams: list[str]
    created_at: str
    updated_at: str


class FileEntry(TypedDict):
    """A file attached to a memory (the API lists them under the memory's `images`)."""

    index: int
    filename: str
    content_type: str
    size: int
    caption: str | None
    # A presigned GET valid 15 minutes on a single-memory read; None in lists and search.
    url: str | None


class Identity(TypedDict):
    id: str | None
    label: str | None


class OnBehalfOf(TypedDict):
    """The person the agent that wrote a memory acts for."""

    id: str
    label: str


class Retraction(TypedDict):
    how: Literal["ended", "wrong"]
    at: str | None
    reason: str | None
    retracted_at: str


class Provenance(TypedDict):
    kind: Literal["api", "remember", "file", "mail", "connector", "import"]
    memory_id: NotRequired[str]
    file_key: NotRequired[str]
    file_url: NotRequired[str]
    file_name: NotRequired[str]
    chunk: NotRequired[int]
    page: NotRequired[int]
    last_page: NotRequired[int]
    slide: NotRequired[int]
    last_slide: NotRequired[int]
    sheet: NotRequired[str]
    last_sheet: NotRequired[str]
    connection_id: NotRequired[str]
    record_id: NotRequired[str]
    url: NotRequired[str]
    message_id: NotRequired[str]
    import_source: NotRequired[str]


class Quarantine(TypedDict):
    state: Literal["held", "released", "rejected", "flagged"]
    reasons: list[str]
    at: str
    decided_by: dict[str, Any] | None
    decided_at: str | None


class Memory(TypedDict):
    id: str
    collection: str
    text: str
    importance: float
    category: str
    source: str
    metadata: dict[str, Any]
    container_tag: str | None
    images: list[FileEntry]
    created_by: Identity
    on_behalf_of: OnBehalfOf | None
    pinned: bool
    archived: bool
    observed_at: str
    valid_from: str
    valid_to: str | None
    expires_at: str | None
    created_at: str
    updated_at: str
    superseded_at: str | None
    retraction: Retraction | None
    provenance: Provenance
    trust: Trust
    quarantine: Quarantine | None


class MemoryUse(TypedDict):
    recalls: int
    last_recalled_at: str | None
    confirmations: int
    last_confirmed_at: str | None


class MemoryWithUse(Memory):
    """A memory read by its id: with how often it was recalled and confirmed."""

    use: MemoryUse


class NewMemory(TypedDict):
    """One item of a bulk create: `text` and any of the optional fields of a single create."""

    text: str
    importance: NotRequired[float]
    category: NotRequired[str]
    source: NotRequired[str]
    metadata: NotRequired[dict[str, Any]]
    container_tag: NotRequired[str | None]
    observed_at: NotRequired[str]
    valid_from: NotRequired[str]
    valid_to: NotRequired[str | None]


class BulkCreated(TypedDict):
    created: int
    # In the order of the items sent.
    ids: list[str]


class SearchNeighbour(TypedDict):
    id: str
    text: str
    category: str
    importance: float
    source: str
    metadata: dict[str, Any]
    images: list[FileEntry]
    created_at: str
    observed_at: str
    valid_from: str
    valid_to: str | None
    provenance: Provenance
    trust: Trust
    flagged: bool
    offset: int


class SearchResult(TypedDict):
    id: str
    text: str
    category: str
    importance: float
    score: float
    source: str
    metadata: dict[str, Any]
    images: list[FileEntry]
    created_at: str
    observed_at: str
    valid_from: str
    valid_to: str | None
    provenance: Provenance
    trust: Trust
    flagged: bool
    # Set by the search over every collection.
    collection: NotRequired[str]
    # Set when the search asked for neighbours.
    neighbours: NotRequired[list[SearchNeighbour]]


class SearchResponse(TypedDict):
    results: list[SearchResult]
    query_embedding_ms: float
    search_ms: float
    cached: bool


class RememberJob(TypedDict):
    """A queued remember: follow it with `extraction_job` or `wait_for_job`."""

    job_id: str
    state: Literal["queued"]


class ExtractedFact(TypedDict):
    # The stored fact; for a duplicate, the existing fact it repeats.
    id: str
    text: str
    type: Literal["fact", "preference", "episode"]
    relation: Literal["new", "duplicate", "supersedes"]
    supersedes_id: NotRequired[str]
    expires_at: str | None


class RememberResult(TypedDict):
    """A remember done inside the request (`remember_sync`)."""

    created: int
    memories: list[ExtractedFact]
    skipped: Literal["spend_cap"] | None


class ExtractionJob(TypedDict):
    job_id: str
    collection: str
    # The raw memory remember stored.
    memory_id: str
    state: Literal["queued", "processing", "done", "failed"]
    facts: list[ExtractedFact]
    complete: bool
    skipped: Literal["spend_cap"] | None
    error: str | None
    attempts: int
    created_at: str
    updated_at: str


class StableMemory(TypedDict):
    id: str
    collection: str
    category: str
    text: str
    trust: Trust
    pinned: bool


class QueryMemory(TypedDict):
    id: str
    collection: str
    category: str
    text: str
    trust: Trust
    score: float


class ContextStable(TypedDict):
    text: str
    version: str
    memories: list[StableMemory]


class ContextQuery(TypedDict):
    text: str
    memories: list[QueryMemory]
    candidates: int


class Context(TypedDict):
    # stable.text followed by query.text: the block to put in a prompt.
    context: str
    tokens: int
    encoding: Literal["o200k_base"]
    stable: ContextStable
    query: ContextQuery


class DroppedFile(TypedDict):
    filename: str
    status: Literal["stored", "failed"]
    key: str | None
    memory_ids: list[str]
    chunks: int
    preview: str
    detail: NotRequired[str]


class DropResult(TypedDict):
    """A drop read while the request waited."""

    batch_id: str
    stored: int
    failed: int
    files: list[DroppedFile]


class RefusedFile(TypedDict):
    filename: str
    detail: str


class QueuedDrop(TypedDict):
    """A drop queued for the worker: follow it with `ingest_batch` or `wait_for_batch`."""

    batch_id: str
    queued: int
    failed: list[RefusedFile]


class BatchFile(TypedDict):
    key: str
    filename: str
    state: Literal["queued", "processing", "done", "failed"]
    chunks: int
    memory_ids: list[str]
    error: str | None


class IngestBatch(TypedDict):
    batch_id: str
    collection: str
    total: int
    done: int
    failed: int
    pending: int
    complete: bool
    files: list[BatchFile]
    created_at: str


class MemoryUsed(TypedDict):
    id: str
    text: str
    # None for a memory of the stable part (profile and pinned).
    score: float | None
    collection: str


class Memvault(TypedDict):
    """What the chat proxy adds to the endpoint's answer."""

    memories_used: list[MemoryUsed]
    stored: bool
    turns_dropped: int
    memory_error: str | None


class ChatCompletion(TypedDict):
    """The LLM endpoint's chat completion as it answered (OpenAI's fields), plus `memvault`."""

    id: NotRequired[str]
    object: NotRequired[str]
    created: NotRequired[int]
    model: NotRequired[str]
    choices: list[dict[str, Any]]
    usage: NotRequired[dict[str, Any]]
    memvault: Memvault
