"""Debian's Chromium driven by Playwright, for every browser test (the service's page and
JupyterLab). The browser is the system's `chromium`, never a downloaded one: `.ci/run`
installs it from the Debian packages; without it the tests skip on a developer's machine
and fail in CI."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium")
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SKIP_REASON = (
    "no chromium on this machine: apt-get install -y chromium fonts-wqy-zenhei "
    "(.ci/run installs it, and in CI this test never skips)"
)


def needs_chromium() -> pytest.MarkDecorator:
    return pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"), reason=SKIP_REASON)


def artifacts(tmp_path: Path, folder: str) -> Path:
    """Where screenshots go: $HOLOGRAM_ARTIFACTS/<folder> in CI, else the test's tmp dir."""
    path = Path(os.environ.get("HOLOGRAM_ARTIFACTS", tmp_path)) / folder
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def chromium_page(width: int, height: int, timeout_ms: float) -> Iterator[tuple[Any, list[str]]]:
    """A Chromium page and the list its console errors and page errors collect into."""
    from playwright.sync_api import sync_playwright

    assert CHROMIUM is not None, "CI must install chromium before the tests (see .ci/run)"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.set_default_timeout(timeout_ms)
            problems: list[str] = []
            page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
            page.on(
                "console",
                lambda msg: (
                    problems.append(f"console {msg.type}: {msg.text}")
                    if msg.type == "error"
                    else None
                ),
            )
            yield page, problems
        finally:
            browser.close()
