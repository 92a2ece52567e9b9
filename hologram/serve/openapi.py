"""The OpenAPI document of /api/v1, served by the service itself at /api/v1/openapi.json."""

from __future__ import annotations

from typing import Any

_ERROR = {
    "type": "object",
    "properties": {"error": {"type": "string", "description": "what is wrong, and the fix"}},
    "required": ["error"],
}
_LEVEL = {
    "description": "0-3 or 'queued', 'L1', 'L2', 'L3' (L4 is kernel-exclusive)",
    "oneOf": [{"type": "integer", "minimum": 0, "maximum": 3}, {"type": "string"}],
}
_INPUT = {
    "type": "object",
    "required": ["text"],
    "additionalProperties": False,
    "properties": {
        "text": {"type": "string", "minLength": 1},
        "channel": {"type": "string", "default": "http", "description": "output channel"},
        "level": _LEVEL,
        "source": {"type": "string", "default": "http"},
        "timeout": {
            "type": "number",
            "default": 60,
            "maximum": 600,
            "description": "seconds /input/sync waits for the reply",
        },
    },
}
_ACK = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "level": {"type": "integer"}},
    "required": ["id", "level"],
}
_RESULT = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "reply": {"type": "string"},
        "ended_by": {"type": "string"},
        "rounds": {"type": "integer"},
        "channel": {"type": "string"},
        "delivered": {"type": "boolean"},
    },
    "required": ["id", "reply", "ended_by"],
}
_SETTING_PUT = {
    "type": "object",
    "required": ["key"],
    "properties": {
        "key": {"type": "string"},
        "value": {"description": "the value as typed JSON"},
        "text": {"type": "string", "description": "text parsed into the key's type"},
    },
}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*codes: int) -> dict[str, Any]:
    reasons = {
        400: "malformed JSON or a field that is wrong",
        401: "bearer token missing or wrong (non-loopback bind)",
        403: "not allowed (a built-in or shipped plugin cannot be uninstalled)",
        404: "not found",
        413: "request body over the size limit",
        415: "body not sent as application/json",
        503: "the service is shutting down",
        504: "no reply within the timeout",
    }
    return {str(c): _json(_ERROR, reasons[c]) for c in (401, *codes)}


def _op(summary: str, ok: dict[str, Any], *errors: int, body: Any = None, **extra: Any):
    op: dict[str, Any] = {"summary": summary, "responses": {**ok, **_errors(*errors)}, **extra}
    if body is not None:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
    return op


def _query(name: str, kind: str, description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": {"type": kind}, "description": description}


def _path(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "schema": {"type": "string"},
        "description": description,
    }


def _memory_paths(anything: dict[str, Any]) -> dict[str, Any]:
    """The read endpoints over the context, cold context, graph and knowledge base."""
    history = _query("history", "boolean", "closed facts too (kept as history)")
    limit = _query("limit", "integer", "at most this many")
    return {
        "/coldcontext/query": {
            "get": _op(
                "Cold-context documents most related to a text (the agent's own ranked search; "
                "each hit's access count goes up, as when the agent recalls it)",
                {"200": _json(anything, "hits, best first, with their scores")},
                400,
                404,
                parameters=[
                    _query("q", "string", "the text to look for (required)"),
                    _query("top", "integer", "at most this many (default 5)"),
                ],
            )
        },
        "/graph": {
            "get": _op(
                "Graph counts (entities, facts, blocks) and heartbeat token use",
                {"200": _json(anything, "stats and heartbeat")},
                404,
            )
        },
        "/graph/entities": {
            "get": _op(
                "Entities, most mentioned first",
                {"200": _json(anything, "entities")},
                400,
                404,
                parameters=[limit],
            )
        },
        "/graph/entities/{name}": {
            "get": _op(
                "One entity (by name or alias) and its facts",
                {"200": _json(anything, "the entity and its facts, newest first")},
                400,
                404,
                parameters=[_path("name", "entity name or alias"), history],
            )
        },
        "/graph/facts": {
            "get": _op(
                "Facts, newest first, of the whole graph or of one entity",
                {"200": _json(anything, "facts")},
                400,
                404,
                parameters=[_query("entity", "string", "only this entity's facts"), history, limit],
            )
        },
        "/graph/recall": {
            "get": _op(
                "What the graph recalls for a text or for entity names (does not mark them "
                "recalled for the agent's next turn)",
                {"200": _json(anything, "entities and facts, best first, and their text")},
                400,
                404,
                parameters=[
                    _query("q", "string", "text to recall for"),
                    _query("keywords", "string", "comma-separated entity names"),
                    _query("depth", "integer", "hops from the matched entities (0-4)"),
                    history,
                    limit,
                ],
            )
        },
        "/knowledge": {
            "get": _op(
                "Knowledge entries and categories, all or under one category",
                {"200": _json(anything, "entry names and category counts")},
                400,
                404,
                parameters=[_query("category", "string", "a category path like 'cooking'")],
            )
        },
        "/knowledge/search": {
            "get": _op(
                "Knowledge entries best matching a text",
                {"200": _json(anything, "hits with a snippet")},
                400,
                404,
                parameters=[
                    _query("q", "string", "the text to look for (required)"),
                    _query("top", "integer", "at most this many (default 5)"),
                    _query("category", "string", "only within this category"),
                ],
            )
        },
        "/knowledge/entries/{name}": {
            "get": _op(
                "One knowledge entry: its content and media list",
                {"200": _json(anything, "the entry")},
                400,
                404,
                parameters=[_path("name", "the entry's path, like 'cooking/bread/sourdough'")],
            )
        },
    }


def _plugin_paths(anything: dict[str, Any]) -> dict[str, Any]:
    package = {
        "required": True,
        "content": {
            kind: {"schema": {"type": "string", "format": "binary"}}
            for kind in ("application/zip", "application/octet-stream")
        },
    }
    return {
        "/plugins": {
            "get": _op(
                "Every plugin with its state, tools and health, and the packages refused",
                {"200": _json(anything, "plugins")},
                404,
            ),
            "post": _op(
                "Install a .hmap package sent as the body; it starts if its manifest says "
                "auto_start (limit: core.plugins.max_package_bytes)",
                {"201": _json(anything, "installed; 'started' says whether it runs")},
                400,
                404,
                413,
                415,
                parameters=[_query("replace", "boolean", "replace an installed plugin")],
                requestBody=package,
            ),
        },
        "/plugins/{name}": {
            "delete": _op(
                "Stop an installed plugin and delete its folder (its settings stay)",
                {"200": _json(anything, "{'uninstalled': name}")},
                403,
                404,
                parameters=[_path("name", "the plugin's name")],
            )
        },
    }


def openapi_document(version: str) -> dict[str, Any]:
    anything = {"type": "object"}
    paths: dict[str, Any] = {
        "/input": {
            "post": _op(
                "Queue an input; answers with its id once the journal has committed it",
                {"202": _json(_ACK, "recorded and queued")},
                400,
                413,
                415,
                503,
                body=_INPUT,
            )
        },
        "/input/sync": {
            "post": _op(
                "Queue an input and wait for its reply",
                {"200": _json(_RESULT, "the turn's result (ended_by 'stopped' if stopped)")},
                400,
                413,
                415,
                503,
                504,
                body=_INPUT,
            )
        },
        "/inputs/{id}": {
            "get": _op(
                "One input as the journal has it: state, reply",
                {"200": _json(anything, "the journal record")},
                404,
                parameters=[
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}
                ],
            )
        },
        "/interrupt": {
            "post": _op(
                "Inject an interrupt (level L1-L3, default L1)",
                {"202": _json(_ACK, "recorded and queued")},
                400,
                413,
                415,
                503,
                body=_INPUT,
            )
        },
        "/stop": {
            "post": _op(
                "Stop the running turn and short-circuit every input waiting now",
                {"200": _json(anything, "{'stopped': [ids]}")},
            )
        },
        "/status": {
            "get": _op(
                "Layers, scheduler, journal counts, LLM sources, memory counts, plugins, service",
                {"200": _json(anything, "status")},
            )
        },
        "/settings": {
            "get": _op(
                "Settings with their source and doc (secrets masked), and plugin namespaces",
                {"200": _json(anything, "settings")},
                parameters=[_query("prefix", "string", "only keys starting with this")],
            ),
            "put": _op(
                "Store one setting; invalid keys and values are refused with the reason",
                {"200": _json(anything, "the setting as now stored (masked)")},
                400,
                413,
                415,
                body=_SETTING_PUT,
            ),
        },
        "/events": {
            "get": _op(
                "Server-sent events: every bus event (agent_llm_chain included); id is the "
                "event's seq; resume with Last-Event-ID (or ?last_event_id=)",
                {
                    "200": {
                        "description": "text/event-stream",
                        "content": {"text/event-stream": {"schema": {"type": "string"}}},
                    }
                },
                400,
                parameters=[
                    _query("types", "string", "comma-separated event types to keep"),
                    _query("last_event_id", "integer", "resume after this seq"),
                ],
            )
        },
        "/context": {
            "get": _op(
                "The context window, newest last",
                {"200": _json(anything, "events")},
                400,
                404,
                parameters=[_query("limit", "integer", "at most this many (newest)")],
            )
        },
        "/coldcontext": {
            "get": _op(
                "Cold-context documents, newest first (reading does not count as recall)",
                {"200": _json(anything, "documents")},
                400,
                404,
                parameters=[
                    _query("contains", "string", "case-insensitive text filter"),
                    _query("limit", "integer", "at most this many"),
                ],
            )
        },
        "/memory": {"get": _op("Memory counts", {"200": _json(anything, "counts")})},
        **_memory_paths(anything),
        **_plugin_paths(anything),
        "/openapi.json": {"get": _op("This document", {"200": _json(anything, "OpenAPI 3.1")})},
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "Hologram kernel service", "version": version},
        "servers": [{"url": "/api/v1"}],
        "components": {
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "required when the service is bound beyond loopback; "
                    "the token is in <data>/serve_token",
                }
            }
        },
        "security": [{}, {"bearer": []}],
        "paths": paths,
    }
