"""Fixtures: the real service as a subprocess, and the scripted model in a process of its own."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.serve.harness import ScriptedModel, Service


@pytest.fixture
def make_service(data_dir: Path) -> Iterator[Callable[..., Service]]:
    started: list[Service] = []

    def make(**options: object) -> Service:
        service = Service(data_dir, **options)  # type: ignore[arg-type]
        started.append(service)
        return service.start()

    yield make
    for service in started:
        service.ensure_stopped()


@pytest.fixture
def service(make_service: Callable[..., Service]) -> Service:
    """The service on 127.0.0.1 with the offline scripted model (no LLM configured)."""
    return make_service()


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    running = ScriptedModel().start()
    yield running
    running.stop()
