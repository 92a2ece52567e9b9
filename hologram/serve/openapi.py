"""The OpenAPI document of /api/v1, made from the endpoints' declarations and served by the
service itself at /api/v1/openapi.json.

Every schema in it is derived (`hologram.sdk.schema`) from the types the endpoints parse
and return: a body is the dataclass its parser fills (it names every field it takes: unknown
ones are refused), a parameter is a field of the endpoint's parameter dataclass with its
bounds, a result is the dataclass or TypedDict the endpoint answers with. The limits the
service enforces are stated beside them.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict, get_args

from starlette.requests import Request
from starlette.responses import Response

from hologram.media import ACCEPTED
from hologram.sdk import JSON, Param, Schemas, split_optional, to_json
from hologram.serve.bodies import JSON_LIMITS
from hologram.serve.context import context
from hologram.serve.endpoint import PREFIX, Endpoint, endpoint, reply
from hologram.serve.forms import FORM_KIND, MEDIA_FIELD
from hologram.serve.params import unwrap, wire_name

REFS = "#/components/schemas/"
REASONS = {
    400: "malformed JSON, a field or parameter that is wrong, or a request the store refuses",
    401: "bearer token missing or wrong (non-loopback bind)",
    403: "not allowed (a built-in or shipped plugin cannot be uninstalled, a failback "
    "plugin cannot be stopped)",
    404: "not found, or this kernel has no such part",
    409: "refused: the kernel's state does not allow it (a plugin that failed to start, "
    "with its error; a file changed again since the call whose change would be undone)",
    413: "request body over the size limit",
    415: "body not sent with a content type this operation takes",
    500: "the turn itself failed (a fault in the kernel, reported with the input's id)",
    503: "the service is shutting down and takes no more input",
    504: "no reply within the timeout (the input is still queued or running)",
}
TAGS = {
    "inputs": "Input for the agent, its replies, interrupts and stop",
    "media": "Stored media (images) by digest, as inputs, tools and memory refer to it",
    "status": "The kernel and the service at a glance",
    "settings": "The configuration registry",
    "events": "The live event stream",
    "memory": "The context window and the cold context",
    "graph": "The graph memory",
    "knowledge": "The knowledge base",
    "plugins": "Plugins: list, install a .hmap, enable, disable, reload, uninstall",
    "llm": "The model sources: list them, switch the one tried first",
    "changes": "File changes of tool calls, and their undo",
    "meta": "This document",
}


@dataclass(frozen=True, slots=True)
class ErrorBody:
    """A refusal: what is wrong, and the fix."""

    error: str
    id: Annotated[int | None, Param("the input concerned, when there is one (503, 504)")] = None


class OpenApiDocument(TypedDict):
    """An OpenAPI 3.1 document."""

    openapi: str
    info: dict[str, Any]
    servers: list[dict[str, Any]]
    tags: list[dict[str, Any]]
    components: dict[str, Any]
    security: list[dict[str, Any]]
    paths: dict[str, Any]


def openapi_document(
    endpoints: Sequence[Endpoint], *, version: str, body_limit: int
) -> dict[str, Any]:
    schemas = Schemas(ref_prefix=REFS)
    error = schemas.of(ErrorBody)
    paths: dict[str, dict[str, Any]] = {}
    for ep in endpoints:
        paths.setdefault(ep.template, {})[ep.method.lower()] = _operation(
            ep, schemas, error, body_limit
        )
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Hologram kernel service",
            "version": version,
            "description": f"JSON bodies: {_body_limits(body_limit)}.",
        },
        "servers": [{"url": PREFIX}],
        "tags": [{"name": name, "description": text} for name, text in TAGS.items()],
        "components": {
            "schemas": schemas.definitions,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "required when the service is bound beyond loopback; "
                    "the token is in <data>/serve_token",
                }
            },
        },
        "security": [{}, {"bearer": []}],
        "paths": paths,
    }


def _body_limits(body_limit: int) -> str:
    return (
        f"at most {body_limit} bytes (413 past it), sent as 'Content-Type: application/json' "
        f"(415 otherwise); {JSON_LIMITS} (400 otherwise, naming the field)"
    )


def _operation(ep: Endpoint, schemas: Schemas, error: JSON, body_limit: int) -> JSON:
    ok = (
        {"type": "string", "format": "binary"}
        if ep.result is bytes
        else {"type": "string"}
        if ep.result is str
        else schemas.of(ep.result)
    )
    responses: JSON = {
        str(ep.status): {
            "description": _describe(ep.result),
            "content": {ep.result_media: {"schema": ok}},
        }
    }
    for code in ep.refusals():
        responses[str(code)] = {
            "description": REASONS[code],
            "content": {"application/json": {"schema": error}},
        }
    operation: JSON = {
        "operationId": ep.operation_id,
        "tags": [ep.tag],
        "summary": " ".join((ep.handler.__doc__ or ep.operation_id).split()),
        "responses": responses,
    }
    parameters = _parameters(ep, schemas)
    if parameters:
        operation["parameters"] = parameters
    if ep.body is not None:
        operation["requestBody"] = _request_body(ep, schemas, body_limit)
    return operation


def _describe(tp: Any) -> str:
    if tp is str:
        return "the event stream"
    doc = tp.__doc__
    if not doc or doc.startswith(f"{tp.__name__}("):
        return tp.__name__
    return " ".join(doc.split())


def _parameters(ep: Endpoint, schemas: Schemas) -> list[JSON]:
    parameters = []
    for cls, where in ((ep.path_params, "path"), (ep.query, "query"), (ep.headers, "header")):
        if cls is None:
            continue
        hints = typing.get_type_hints(cls, include_extras=True)
        for field in dataclasses.fields(cls):
            kind, param = unwrap(hints[field.name])
            inner, _ = split_optional(kind)
            schema = param.apply(schemas.of(inner))
            parameter: JSON = {"name": wire_name(field), "in": where}
            if "description" in schema:
                parameter["description"] = schema.pop("description")
            if field.default not in (dataclasses.MISSING, None):
                schema["default"] = to_json(field.default)
            if where == "path" or field.default is dataclasses.MISSING:
                parameter["required"] = True
            parameters.append({**parameter, "schema": schema})
    return parameters


def _request_body(ep: Endpoint, schemas: Schemas, body_limit: int) -> JSON:
    if ep.body is bytes:
        schema: JSON = {"type": "string", "format": "binary"}
        description = "the package file itself, within core.plugins.max_package_bytes"
    else:
        schema = schemas.of(ep.body)
        for member in get_args(ep.body) or (ep.body,):
            _close(schemas, member)
        description = _body_limits(body_limit)
    content: JSON = {}
    for media in ep.body_media:
        if media == FORM_KIND:
            content[media] = _form(ep.body, schemas)
            description = _media_limits(body_limit)
        else:
            content[media] = {"schema": schema}
    return {"required": True, "description": description, "content": content}


def _media_limits(body_limit: int) -> str:
    return (
        f"at most {body_limit} bytes plus core.media.max_items items of core.media.max_bytes "
        "each as base64 (413 past it, naming the settings); as JSON, with media as base64 "
        "items, or as multipart/form-data, with the same fields as text parts and each "
        f"image as a file part named '{MEDIA_FIELD}' (415 for another type); {JSON_LIMITS}; "
        "a form without its boundary, malformed or cut short is a 400; media the store "
        "refuses is a 413 (over core.media.*) or a 415 (an unaccepted, damaged or lying type)"
    )


def _form(body: type, schemas: Schemas) -> JSON:
    """The multipart form of an input body: its fields as text parts, its media as files.
    A component of its own (`<Body>Form`), derived from the JSON body's."""
    name = f"{body.__name__}Form"
    if name not in schemas.definitions:
        fields = schemas.definitions[body.__name__]
        properties = {
            key: value for key, value in fields["properties"].items() if key != MEDIA_FIELD
        }
        properties[MEDIA_FIELD] = {
            "type": "array",
            "items": {"type": "string", "format": "binary"},
            "description": "the media (images), one file part each (their type is sniffed from "
            "the bytes; a part's Content-Type is only checked against them)",
        }
        schemas.definitions[name] = {
            "type": "object",
            "description": f"{fields.get('description', name)} Sent as a form.",
            "properties": properties,
            "required": list(fields.get("required", [])),
            "additionalProperties": False,
        }
    return {
        "schema": {"$ref": REFS + name},
        "encoding": {MEDIA_FIELD: {"contentType": ", ".join(ACCEPTED)}},
    }


def _close(schemas: Schemas, body: type) -> None:
    """A body's component names every field it takes (unknown ones are refused), with the
    defaults of those that may be left out."""
    component = schemas.definitions[body.__name__]
    component["additionalProperties"] = False
    for field in dataclasses.fields(body):
        if field.default is not dataclasses.MISSING and field.default is not None:
            component["properties"][field.name]["default"] = to_json(field.default)


@endpoint("GET", "/openapi.json", tag="meta", result=OpenApiDocument)
async def get_openapi(request: Request) -> Response:
    """This document."""
    return reply(context(request).openapi)
