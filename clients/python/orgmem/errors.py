"""What the client raises: the service's error answers, and failures to reach it."""

from __future__ import annotations

from typing import TypedDict


class FieldError(TypedDict):
    # Dotted; in a bare-array body it starts at the item's index ("3.text"); "" is the body itself.
    path: str
    message: str


class OrgmemError(Exception):
    """The service answered an error status; `detail` is its `{"detail": ...}` text.

    A 422 also lists each invalid field in `errors`; a 429 says in `retry_after` how many seconds
    to wait.
    """

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        errors: list[FieldError] | None = None,
        retry_after: float | None = None,
        method: str = "",
        url: str = "",
    ) -> None:
        self.status = status
        self.detail = detail
        self.errors: list[FieldError] = errors or []
        self.retry_after = retry_after
        self.method = method
        self.url = url
        super().__init__(status, detail)

    def __str__(self) -> str:
        fields = "; ".join(f"{e['path'] or '(body)'}: {e['message']}" for e in self.errors)
        return f"{self.status}: {self.detail}" + (f" ({fields})" if fields else "")


class OrgmemConnectionError(ConnectionError):
    """The service could not be reached or gave no whole answer: refused, timed out, cut off."""

    def __init__(self, method: str, url: str, reason: str) -> None:
        self.method = method
        self.url = url
        self.reason = reason
        super().__init__(f"{method} {url}: {reason}")
