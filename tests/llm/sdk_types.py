"""What an adapter sends, checked against the official SDKs' own request types.

The SDKs describe each request body as TypedDicts (openai, anthropic) or pydantic models
(google-genai, ollama). Those types ignore a key they do not know, and a wrong key is exactly
the mistake an adapter makes (a field of another format, a misspelt name), so the body is
walked against the type here: every key must be one the type declares, every value of the
declared kind, every required key present. A union is met when one of its members is met.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any, Literal, NotRequired, Required, Union, get_args, get_origin

import ollama
import pydantic
from anthropic.types import message_create_params as anthropic_params
from google.genai import types as genai_types
from openai.types.chat import completion_create_params as chat_params
from openai.types.responses import response_create_params as responses_params
from typing_extensions import ReadOnly, is_typeddict

_WRAPPERS = (Required, NotRequired, ReadOnly, typing.Annotated)
_SEQUENCES = (list, collections.abc.Iterable, collections.abc.Sequence, tuple)
_MAPPINGS = (dict, collections.abc.Mapping)


def _unwrap(tp: Any) -> Any:
    while get_origin(tp) in _WRAPPERS:
        tp = get_args(tp)[0]
    return tp


def _fields(tp: Any) -> tuple[dict[str, Any], set[str]]:
    """(declared keys with their types, required keys) of a TypedDict or a pydantic model;
    a model's keys are its aliases (the wire's camelCase) and its field names."""
    if is_typeddict(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        # Read from the hints too: with string annotations the class cannot see Required.
        required = {key for key, hint in hints.items() if get_origin(hint) is Required}
        required |= {k for k in tp.__required_keys__ if get_origin(hints[k]) is not NotRequired}
        return hints, required
    declared: dict[str, Any] = {}
    required: set[str] = set()
    for name, info in tp.model_fields.items():
        for key in {name, info.alias or name}:
            declared[key] = info.annotation
        if info.is_required():
            required.add(info.alias or name)
    return declared, required


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, pydantic.BaseModel)


def problems(value: Any, tp: Any, path: str = "$") -> list[str]:
    """Where `value` does not fit `tp`: an empty list when it does."""
    tp = _unwrap(tp)
    origin = get_origin(tp)
    if tp is Any or tp is object:
        return []
    if origin in (Union, types.UnionType):
        members = [m for m in get_args(tp) if value is None or m is not type(None)]
        found = [problems(value, member, path) for member in members]
        if any(not f for f in found):
            return []
        # The member that failed deepest is the one meant: its problems say what is wrong.
        return min(found, key=lambda f: (any(p.startswith(path + ":") for p in f), len(f)))
    if origin is Literal:
        return [] if value in get_args(tp) else [f"{path}: {value!r} is not one of {get_args(tp)}"]
    if tp is type(None):
        return [] if value is None else [f"{path}: expected null"]
    if is_typeddict(tp) or _is_model(tp):
        if not isinstance(value, dict):
            return [f"{path}: expected an object ({tp.__name__}), got {type(value).__name__}"]
        declared, required = _fields(tp)
        found = [
            f"{path}.{key}: not a field of {tp.__name__}" for key in value if key not in declared
        ]
        found += [f"{path}: {tp.__name__} needs {key!r}" for key in required if key not in value]
        for key, item in value.items():
            if key in declared:
                found += problems(item, declared[key], f"{path}.{key}")
        return found
    if origin in _SEQUENCES or tp in (list, tuple):
        if not isinstance(value, list):
            return [f"{path}: expected an array, got {type(value).__name__}"]
        (item_type, *_) = get_args(tp) or (Any,)
        return [
            p for i, item in enumerate(value) for p in problems(item, item_type, f"{path}[{i}]")
        ]
    if origin in _MAPPINGS or tp is dict:
        if not isinstance(value, dict):
            return [f"{path}: expected an object, got {type(value).__name__}"]
        value_type = (get_args(tp) or (Any, Any))[1]
        return [p for k, v in value.items() for p in problems(v, value_type, f"{path}.{k}")]
    if tp is bool:
        return [] if isinstance(value, bool) else [f"{path}: expected a boolean"]
    if tp in (int, float):
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        whole = tp is float or isinstance(value, int)
        return [] if numeric and whole else [f"{path}: expected {tp.__name__}, got {value!r}"]
    if tp is str:
        return [] if isinstance(value, str) else [f"{path}: expected a string, got {value!r}"]
    if isinstance(tp, type) and issubclass(tp, str):  # str enums (genai's Type, ollama's)
        return [] if isinstance(value, str) else [f"{path}: expected a string, got {value!r}"]
    return []  # bytes, files and other types no JSON body carries


# The top-level keys of a Gemini generateContent body (the REST request; the SDK builds it
# from its own parameter types, one per key).
_GEMINI_BODY: dict[str, Any] = {
    "contents": list[genai_types.Content],
    "systemInstruction": genai_types.Content,
    "tools": list[genai_types.Tool],
    "toolConfig": genai_types.ToolConfig,
    "generationConfig": genai_types.GenerationConfig,
    "safetySettings": list[genai_types.SafetySetting],
    "cachedContent": str,
}

REQUEST_TYPES: dict[str, Any] = {
    "openai": chat_params.CompletionCreateParamsNonStreaming,
    "openai-stream": chat_params.CompletionCreateParamsStreaming,
    "responses": responses_params.ResponseCreateParamsNonStreaming,
    "responses-stream": responses_params.ResponseCreateParamsStreaming,
    "anthropic": anthropic_params.MessageCreateParamsNonStreaming,
    "anthropic-stream": anthropic_params.MessageCreateParamsStreaming,
    "ollama": ollama._types.ChatRequest,
}


def request_problems(
    kind: str, body: dict[str, Any], extensions: frozenset[str] = frozenset()
) -> list[str]:
    """Where `body` strays from the official request type of `kind` ("openai", "anthropic",
    "gemini", "ollama", "responses"; a streamed request is checked as one). `extensions`
    are top-level keys a compatible API adds to the format (DeepSeek's `thinking`)."""
    body = {k: v for k, v in body.items() if k not in extensions}
    if kind == "gemini":
        found = [f"$.{key}: not a generateContent field" for key in body if key not in _GEMINI_BODY]
        for key, value in body.items():
            if key in _GEMINI_BODY:
                found += problems(value, _GEMINI_BODY[key], f"$.{key}")
                # and the SDK's own pydantic validation, for what the walk does not check
                pydantic.TypeAdapter(_GEMINI_BODY[key]).validate_python(value)
        return found
    if kind == "ollama":
        # Ollama's server reads a tool's parameters as a JSON schema (its Go type keeps the
        # keywords it uses and ignores the rest); the Python type models only a few keywords.
        body = {**body, "tools": [_without_parameters(t) for t in body.get("tools") or []]}
    streamed = body.get("stream") is True and f"{kind}-stream" in REQUEST_TYPES
    tp = REQUEST_TYPES[f"{kind}-stream" if streamed else kind]
    if _is_model(tp):
        tp.model_validate(body)
    return problems(body, tp)


def _without_parameters(tool: Any) -> Any:
    if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
        return {
            **tool,
            "function": {k: v for k, v in tool["function"].items() if k != "parameters"},
        }
    return tool


def check_request(kind: str, body: dict[str, Any], *extensions: str) -> None:
    found = request_problems(kind, body, frozenset(extensions))
    assert found == [], "\n".join(found)
