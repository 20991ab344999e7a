"""The optional fields of a search and of a context request, taken as keyword arguments."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from .types import Trust


class SearchOptions(TypedDict, total=False):
    # 1 to 50 (default 5).
    limit: int
    # The cosine a vector candidate needs, 0 to 1 (default 0.3); ignored in text mode.
    min_score: float
    mode: Literal["hybrid", "vector", "text"]
    category: str
    # Only memories whose metadata contains this object.
    metadata_filter: dict[str, Any]
    container_tag: str
    include_archived: bool
    trust: list[Trust]
    # What held at this moment (ISO 8601 with an offset) instead of what is current.
    as_of: str
    observed_after: str
    observed_before: str
    # Rewrite the query, or re-rank the results, with the tenant's LLM (one call each).
    rewrite: bool
    rerank: bool
    # With each result, the memories up to this many places around it in its file or thread (0 to 5).
    neighbours: int


class ContextOptions(TypedDict, total=False):
    # An OpenAI conversation instead of a query: its latest user message is the query.
    messages: list[dict[str, Any]]
    # At most this many memories in the per-query part, 1 to 50 (default 20).
    limit: int
    # Relevance against diversity in the per-query part, 0 to 1 (default 0.3).
    mmr_lambda: float
    container_tag: str
    trust: list[Trust]
    as_of: str

