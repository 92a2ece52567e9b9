"""Who may call the API, and what a body may be."""

from __future__ import annotations

import stat
from collections.abc import Callable

import httpx

from tests.serve.harness import Service


def test_a_non_loopback_bind_requires_the_bearer_token(
    make_service: Callable[..., Service],
) -> None:
    service = make_service(host="0.0.0.0")
    token_line = next(line for line in service.lines if "bearer token" in line)
    token = token_line.rsplit(": ", 1)[1]
    with service.client() as anonymous:
        refused = anonymous.get("/status")
        refused_input = anonymous.post("/input", json={"text": "hi"})
    assert refused.status_code == 401
    assert "serve_token" in refused.json()["error"]
    assert refused_input.status_code == 401
    with service.client(token="wrong") as wrong:
        assert wrong.get("/status").status_code == 401
    with service.client(token=token) as allowed:
        assert allowed.get("/status").json()["service"]["auth"] == "bearer"


def test_the_token_file_is_private_and_the_token_printed_only_when_made(
    make_service: Callable[..., Service],
) -> None:
    first = make_service(host="0.0.0.0")
    token_file = first.data_dir / "serve_token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    token = token_file.read_text().strip()
    assert any(token in line for line in first.lines)
    assert first.terminate()[0] == 0
    second = make_service(host="0.0.0.0")
    assert not any(token in line for line in second.lines)
    assert any("bearer token in" in line for line in second.lines)
    with second.client(token=token) as http:
        assert http.get("/status").status_code == 200


def test_a_loopback_bind_needs_no_token_but_refuses_a_foreign_host_header(
    service: Service,
) -> None:
    with service.client() as http:
        assert http.get("/status").status_code == 200
        rebound = http.get("/status", headers={"host": "evil.example:80"})
    assert rebound.status_code == 403
    assert "loopback" in rebound.json()["error"]


def test_an_oversize_body_gets_413_and_is_not_recorded(service: Service) -> None:
    big = '{"text": "' + "x" * (2 << 20) + '"}'
    with service.client() as http:
        declared = http.post("/input", content=big, headers={"content-type": "application/json"})

        def chunks():  # no Content-Length: the limit must hold while reading
            for start in range(0, len(big), 65536):
                yield big[start : start + 65536].encode()

        streamed = http.post(
            "/input", content=chunks(), headers={"content-type": "application/json"}
        )
        counts = http.get("/status").json()["inputs"]
    assert declared.status_code == 413
    assert "over the limit" in declared.json()["error"]
    assert streamed.status_code == 413
    assert counts == {}


def test_malformed_json_gets_400_saying_where(service: Service) -> None:
    with service.client() as http:
        broken = http.post(
            "/input", content=b'{"text": "hi",', headers={"content-type": "application/json"}
        )
        settings = http.put(
            "/settings", content=b"{key: 1}", headers={"content-type": "application/json"}
        )
        not_json = http.post("/input", content=b"text=hi", headers={"content-type": "text/plain"})
    assert broken.status_code == 400
    assert broken.json()["error"].startswith("request body is not valid JSON: ")
    assert "line 1 column" in broken.json()["error"]
    assert settings.status_code == 400
    assert not_json.status_code == 415
    assert "application/json" in not_json.json()["error"]


def test_the_page_is_served_by_the_kernel_without_a_token(
    make_service: Callable[..., Service],
) -> None:
    service = make_service(host="0.0.0.0")
    page = httpx.get(service.url + "/", timeout=10)
    assert page.status_code == 200
    assert "<html" in page.text.lower()
