"""An endpoint of the API: a module-level handler and its declaration.

`@endpoint(method, path, ...)` names the types an endpoint parses (its body, its query, path
and header parameters) and the type it returns. The app's routes and the OpenAPI document
are both made from that one declaration, and the handler parses and answers with those very
types, so the document cannot drift from what the service does.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from hologram.sdk import jsontext, to_json

log = logging.getLogger(__name__)

Handler = Callable[[Request], Awaitable[Response]]
PREFIX = "/api/v1"
JSON_MEDIA = "application/json"
_CONVERTOR = re.compile(r"\{(\w+):\w+\}")


@dataclass(frozen=True, slots=True)
class Endpoint:
    method: str
    path: str
    """Under the API prefix, as Starlette routes it (`/graph/entities/{name:path}`)."""
    handler: Handler
    tag: str
    result: Any
    """The type of the success body (`str` for a stream that is not JSON)."""
    status: int = 200
    body: Any = None
    query: type | None = None
    path_params: type | None = None
    headers: type | None = None
    errors: tuple[int, ...] = ()
    """Refusals besides those that follow from the declaration (400 for parameters and
    bodies, 413 and 415 for bodies, 401 for every operation)."""
    result_media: str = JSON_MEDIA
    body_media: tuple[str, ...] = (JSON_MEDIA,)
    prefix: str = PREFIX
    """Where `path` hangs: the API's own prefix, or another door's (OpenAI's /v1)."""

    @property
    def operation_id(self) -> str:
        return self.handler.__name__

    @property
    def template(self) -> str:
        """The path as the OpenAPI document writes it (`/graph/entities/{name}`)."""
        return _CONVERTOR.sub(r"{\1}", self.path)

    def refusals(self) -> list[int]:
        codes = {401, *self.errors}
        if self.body is not None:
            codes |= {400, 413, 415}
        if self.query or self.path_params or self.headers:
            codes.add(400)
        return sorted(codes)


def endpoint(
    method: str, path: str, *, tag: str, result: Any, **declared: Any
) -> Callable[[Handler], Endpoint]:
    """Declare the decorated handler as the endpoint `method path` (see `Endpoint`)."""

    def declare(handler: Handler) -> Endpoint:
        return Endpoint(method, path, handler, tag, result, **declared)

    return declare


class JsonReply(JSONResponse):
    """A JSON response that a stored string no UTF-8 can encode cannot turn into a 500."""

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            # Input is refused at the door when it holds a lone surrogate, but a model's reply
            # or a record from before that check may still hold one: it is shown as U+FFFD.
            log.warning("a response held lone surrogates; they are sent as U+FFFD")
            return jsontext.replace_lone_surrogates(text).encode("utf-8")


def reply(value: Any, status: int = 200) -> Response:
    """`value` (a dataclass, TypedDict or container of them) as the JSON response."""
    return JsonReply(to_json(value), status_code=status)
