"""GET /api/v1/health: liveness (the running kernel's checks) and readiness (with the
self-test turn); a failing check answers 503 naming the cause."""

from __future__ import annotations

import socket
from collections.abc import Callable

from tests.serve.harness import Service


def test_health_is_200_with_every_check_and_readiness_adds_the_selftest(
    service: Service,
) -> None:
    with service.client(timeout=60) as http:
        live = http.get("/health")
        ready = http.get("/health", params={"ready": "true"})

    assert live.status_code == 200 and live.json()["ok"] is True
    names = [c["name"] for c in live.json()["checks"]]
    assert "selftest" not in names and {"kernel", "llm:default", "disk"} <= set(names)
    assert ready.status_code == 200
    assert ready.json()["checks"][0] == {
        "name": "selftest",
        "ok": True,
        "detail": "a virtual kernel booted and answered one turn",
    }


def test_an_unreachable_llm_source_makes_health_503_naming_it(
    make_service: Callable[..., Service],
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    unreachable = f"http://127.0.0.1:{port}/v1"
    service = make_service(env={"HOLOGRAM_LLM_BASE_URL": unreachable, "HOLOGRAM_LLM_MODEL": "m"})

    with service.client(timeout=60) as http:
        answer = http.get("/health")

    assert answer.status_code == 503 and answer.json()["ok"] is False
    (failed,) = [c for c in answer.json()["checks"] if not c["ok"]]
    assert failed["name"] == "llm:default" and unreachable in failed["detail"]


def test_with_every_llm_source_down_the_service_answers_through_recoverydiag(
    make_service: Callable[..., Service],
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {"HOLOGRAM_LLM_BASE_URL": f"http://127.0.0.1:{port}/v1", "HOLOGRAM_LLM_MODEL": "m"}
    service = make_service(env=env)

    with service.client(timeout=60) as http:
        answered = http.post("/input/sync", json={"text": "are you there?", "timeout": 30})
        plugins = {p["name"]: p["state"] for p in http.get("/plugins").json()["plugins"]}

    assert answered.status_code == 200, answered.text
    assert answered.json()["reply"].startswith("[recoverydiag] No model could answer")
    assert answered.json()["delivered"] is True
    assert plugins["pluginmgr"] == plugins["recoverydiag"] == "running"
