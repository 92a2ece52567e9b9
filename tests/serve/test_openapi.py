"""The OpenAPI document is made from the endpoints' own types: every operation has an id and
a tag, every JSON body and response is a named component, and what the service sends is
exactly the type the document derives its schema from."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import hologram.serve
from hologram.serve.inputs import InputResult
from hologram.serve.status import Status
from tests.serve.harness import Service

REFS = "#/components/schemas/"
MAX_FUNCTION_LINES = 80


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data_dir = tmp_path_factory.mktemp("openapi") / "data"
    data_dir.mkdir()
    service = Service(data_dir)
    try:
        yield service.start()
    finally:
        service.ensure_stopped()


@pytest.fixture(scope="module")
def document(live: Service) -> dict[str, Any]:
    with live.client() as http:
        found: dict[str, Any] = http.get("/openapi.json").json()
    return found


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            yield path, method, operation


def refs_of(schema: dict[str, Any]) -> list[str]:
    members = schema.get("anyOf", [schema])
    return [m.get("$ref", "") for m in members]


def test_every_operation_has_a_unique_operation_id_and_a_declared_tag(
    document: dict[str, Any],
) -> None:
    tags = {t["name"] for t in document["tags"]}
    ids = [op["operationId"] for _, _, op in operations(document)]
    assert len(ids) == len(set(ids)) == 35
    for path, method, op in operations(document):
        assert op["tags"] and set(op["tags"]) <= tags, (path, method)
        assert op["summary"], (path, method)


def test_every_json_body_and_response_is_a_component_schema(document: dict[str, Any]) -> None:
    components = document["components"]["schemas"]
    for path, method, op in operations(document):
        bodies = op.get("requestBody", {}).get("content", {})
        answers = [r.get("content", {}) for r in op["responses"].values()]
        for content in (bodies, *answers):
            if "application/json" not in content:
                continue
            for ref in refs_of(content["application/json"]["schema"]):
                assert ref.startswith(REFS), (path, method, ref)
                assert ref.removeprefix(REFS) in components, ref
    for name, schema in components.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema.get("properties") or schema.get("enum"), name
    binary = document["paths"]["/plugins"]["post"]["requestBody"]["content"]
    assert binary["application/zip"]["schema"] == {"type": "string", "format": "binary"}


def test_a_sync_result_is_the_one_result_type_the_document_states(
    live: Service, document: dict[str, Any]
) -> None:
    with live.client() as http:
        result = http.post("/input/sync", json={"text": "one shape"}).json()
        status = http.get("/status").json()
    fields = {f.name for f in dataclasses.fields(InputResult)}
    schema = document["components"]["schemas"]["InputResult"]
    assert set(result) == fields == set(schema["properties"])
    assert set(schema["required"]) == fields - {"detail"}
    jsonschema.validate(result, {**schema, "$defs": {}})
    assert set(status) == {f.name for f in dataclasses.fields(Status)}


def test_no_function_of_the_service_is_longer_than_80_lines() -> None:
    package = Path(hologram.serve.__file__).parent
    long = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(package)}:{node.name} ({lines} lines)")
    assert long == []


def test_the_readme_names_each_path_as_the_document_does(document: dict[str, Any]) -> None:
    readme = (Path(hologram.serve.__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    for path in ("/knowledge/entries/{name}", "/graph/entities/{name}", "/inputs/{id}"):
        assert path in document["paths"]
        assert path in readme, path
