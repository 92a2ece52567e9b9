"""multipart/form-data bodies: an input's fields as text parts and its media as file parts.

Parsed with python-multipart's streaming parser over the body already read within its
limit, rather than through Starlette's form reader, for two reasons: the parser's end
callback tells a complete body from one cut off before its closing boundary (the form
reader takes a truncated body as it is), and each refusal can say which part is wrong.
The result is what a JSON body gives, field values and `Upload`s, so everything after
parsing (the checks of the fields, the media store's sniffing and limits) is one path.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header

from hologram.media import Upload
from hologram.serve.bodies import ApiError

FORM_KIND = "multipart/form-data"
MEDIA_FIELD = "media"
"""The name a file part is sent under (any part with a file name is taken as media too)."""


@dataclass
class _Part:
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)

    def disposition(self) -> tuple[str, str | None]:
        raw = self.headers.get("content-disposition")
        if raw is None:
            raise ApiError(400, "a multipart part has no Content-Disposition header")
        kind, options = parse_options_header(raw)
        if kind != b"form-data" or b"name" not in options:
            raise ApiError(
                400, "each multipart part needs 'Content-Disposition: form-data; name=...'"
            )
        name = options[b"name"].decode("utf-8", "replace")
        filename = options.get(b"filename")
        return name, None if filename is None else filename.decode("utf-8", "replace")


@dataclass(frozen=True, slots=True)
class Form:
    fields: dict[str, str]
    uploads: list[Upload]


def boundary_of(content_type: str) -> bytes:
    kind, options = parse_options_header(content_type)
    boundary = options.get(b"boundary", b"")
    if kind != FORM_KIND.encode() or not boundary:
        raise ApiError(
            400,
            "a multipart/form-data body needs its boundary in the Content-Type "
            "('multipart/form-data; boundary=...')",
        )
    if len(boundary) > 70:
        raise ApiError(400, "the multipart boundary is longer than 70 characters")
    return boundary


def parse_form(raw: bytes, content_type: str, fields: frozenset[str]) -> Form:
    """`raw` as text fields (each of `fields` at most once) and file parts, or a 400 naming
    what is wrong: no boundary, a malformed or truncated body, an unknown or repeated field,
    a field that is not UTF-8."""
    boundary = boundary_of(content_type)
    parts: list[_Part] = []
    header = [bytearray(), bytearray()]
    ended = False

    def begin() -> None:
        parts.append(_Part())

    def data(buffer: bytes, start: int, end: int) -> None:
        parts[-1].chunks.append(buffer[start:end])

    def header_field(buffer: bytes, start: int, end: int) -> None:
        header[0] += buffer[start:end]

    def header_value(buffer: bytes, start: int, end: int) -> None:
        header[1] += buffer[start:end]

    def header_end() -> None:
        name = header[0].decode("latin-1").strip().lower()
        # Latin-1, as python-multipart reads header options: a browser's UTF-8 file name
        # comes back as its bytes, and is decoded as UTF-8 where it is read.
        parts[-1].headers[name] = header[1].decode("latin-1").strip()
        header[0].clear()
        header[1].clear()

    def end() -> None:
        nonlocal ended
        ended = True

    parser = MultipartParser(
        boundary,
        {
            "on_part_begin": begin,
            "on_part_data": data,
            "on_header_field": header_field,
            "on_header_value": header_value,
            "on_header_end": header_end,
            "on_end": end,
        },
    )
    try:
        parser.write(raw)
        parser.finalize()
    except FormParserError as exc:
        raise ApiError(400, f"the multipart body is malformed: {exc}") from None
    if not ended:
        raise ApiError(
            400,
            "the multipart body ends before its closing boundary (truncated, or the "
            "boundary in the Content-Type is not the one the body uses)",
        )
    return _form(parts, fields)


def _form(parts: list[_Part], fields: frozenset[str]) -> Form:
    values: dict[str, str] = {}
    uploads: list[Upload] = []
    for index, part in enumerate(parts):
        name, filename = part.disposition()
        content = b"".join(part.chunks)
        if filename is not None or name == MEDIA_FIELD:
            if filename == "" and not content:
                continue  # a form's file input left empty: no file, not an empty one
            declared = part.headers.get("content-type", "")
            uploads.append(Upload(content, declared, filename or ""))
            continue
        if name not in fields:
            raise ApiError(
                400,
                f"unknown form field {name!r} (part {index}); the form has "
                f"{sorted(fields)} and file parts named {MEDIA_FIELD!r}",
            )
        if name in values:
            raise ApiError(400, f"form field {name!r} is sent twice")
        try:
            values[name] = content.decode("utf-8")
        except UnicodeDecodeError:
            raise ApiError(400, f"form field {name!r} is not UTF-8") from None
    return Form(values, uploads)
