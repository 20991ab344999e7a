"""One HTTP exchange with urllib: the answer's body, or the exception that says what failed."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from typing import Any

from .errors import FieldError, OrgmemConnectionError, OrgmemError

# The longest part of a body that is not the service's JSON (a proxy's HTML page) kept as a detail.
_DETAIL_CHARS = 500


def send(request: urllib.request.Request, timeout: float) -> bytes:
    """The body of a 2xx answer; OrgmemError for any other status, OrgmemConnectionError when no answer came."""
    method = request.get_method()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.read()
    except urllib.error.HTTPError as err:
        raise _api_error(err, method, request.full_url) from None
    except urllib.error.URLError as err:
        raise OrgmemConnectionError(method, request.full_url, _reason(err.reason)) from err
    except TimeoutError as err:
        raise OrgmemConnectionError(method, request.full_url, f"no answer within {timeout:g} s") from err
    except (OSError, http.client.HTTPException) as err:
        raise OrgmemConnectionError(method, request.full_url, _reason(err)) from err


def parse_json(body: bytes) -> Any:
    """A JSON answer; None for an empty one (204)."""
    return json.loads(body) if body else None


def _reason(reason: object) -> str:
    if isinstance(reason, TimeoutError):
        return "timed out"
    return str(reason) or type(reason).__name__


def _api_error(err: urllib.error.HTTPError, method: str, url: str) -> OrgmemError:
    try:
        raw = err.read()
    except (OSError, http.client.HTTPException):
        raw = b""
    try:
        payload = json.loads(raw)
    except ValueError:
        payload = None
    errors: list[FieldError] = []
    if isinstance(payload, dict) and isinstance(payload.get("detail"), str):
        detail = payload["detail"]
        errors = [e for e in payload.get("errors") or [] if isinstance(e, dict)]
    else:
        # Not the service's own answer (a reverse proxy's page, say): its text, or the status line.
        detail = raw.decode("utf-8", "replace").strip()[:_DETAIL_CHARS] or str(err.reason)
    return OrgmemError(err.code, detail, errors=errors, retry_after=_seconds(err.headers.get("Retry-After")), method=method, url=url)


def _seconds(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
