"""Files to send, and the multipart body that carries them."""

from __future__ import annotations

import mimetypes
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class File:
    """One file to upload: its name, its bytes and its content type."""

    filename: str
    data: bytes
    content_type: str = "application/octet-stream"

    @classmethod
    def from_path(cls, path: str | Path, content_type: str | None = None) -> File:
        """The file at `path`, its content type guessed from its name unless given."""
        p = Path(path)
        guessed = content_type or mimetypes.guess_type(p.name)[0] or "application/octet-stream"
        return cls(p.name, p.read_bytes(), guessed)


def _header_value(text: str) -> str:
    # A quote or a line break would end the header's quoted string early: replaced, as the server
    # does with the names it sends back.
    return "".join("_" if c in '"\\\r\n' else c for c in text)


def multipart(fields: Mapping[str, str], files: Sequence[File]) -> tuple[bytes, str]:
    """A multipart/form-data body of text fields and files, and its content type.

    The service takes a file part under any name; each goes as `files`, as the API documents.
    """
    boundary = f"orgmem-{secrets.token_hex(16)}"
    parts: list[bytes] = []
    for name, value in fields.items():
        head = f'--{boundary}\r\nContent-Disposition: form-data; name="{_header_value(name)}"\r\n\r\n'
        parts.append(head.encode() + value.encode() + b"\r\n")
    for f in files:
        head = (
            f"--{boundary}\r\n"
            f'Content-Disposition: form-data; name="files"; filename="{_header_value(f.filename)}"\r\n'
            f"Content-Type: {_header_value(f.content_type)}\r\n\r\n"
        )
        parts.append(head.encode() + f.data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"
