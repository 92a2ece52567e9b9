"""A real JupyterLab on loopback, and a page of Debian's Chromium (`tests.chromium`).

JupyterLab runs with its own config and runtime folders, no update check, no news and a
read-only extension manager, so nothing reaches beyond loopback.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.chromium import chromium_page
from tests.serve.harness import Output

START_DEADLINE_S = 90.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class JupyterLab:
    root: Path
    url: str
    token: str
    process: subprocess.Popen[str]

    def notebook_url(self, name: str) -> str:
        # `reset`: a fresh workspace, so tabs a previous test opened are not restored.
        return f"{self.url}/lab/tree/{name}?reset&token={self.token}"


@pytest.fixture(scope="module")
def jupyterlab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterLab]:
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            raise AssertionError("CI installs the [test] extra, which has jupyterlab") from None
        pytest.skip("JupyterLab comes with the [test] extra: pip install -e '.[test]'")
    base = tmp_path_factory.mktemp("jupyterlab")
    root, config, runtime = base / "root", base / "config", base / "runtime"
    for folder in (root, config, runtime):
        folder.mkdir()
    (config / "jupyter_server_config.json").write_text(
        json.dumps(
            {
                "LabApp": {
                    "news_url": None,
                    "extension_manager": "readonly",
                    "check_for_updates_class": "jupyterlab.NeverCheckForUpdate",
                },
                "ServerApp": {"open_browser": False},
            }
        )
    )
    # The news prompt would cover part of the notebook in every screenshot.
    (config / "labconfig").mkdir()
    (config / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    )
    # JupyterLab renders only the cells near the viewport by default (its windowing mode
    # changed between releases): every cell in the page, so each prompt and widget is there
    # to be counted.
    tracker = base / "settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    token = secrets.token_hex(16)
    port = free_port()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTER_RUNTIME_DIR": str(runtime),
        "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
        "JUPYTERLAB_SETTINGS_DIR": str(base / "settings"),
    }
    env.pop("HOLOGRAM_DATA", None)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--allow-root",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        lines = Output(process).until(r"http://127\.0\.0\.1:\d+/lab", START_DEADLINE_S)
        found = re.search(r"http://127\.0\.0\.1:(\d+)/lab", "\n".join(lines))
        assert found is not None and int(found.group(1)) == port, lines
        yield JupyterLab(root, f"http://127.0.0.1:{port}", token, process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


@pytest.fixture
def browser_page() -> Iterator[tuple[Any, list[str]]]:
    """A Chromium page and the list its console errors and page errors collect into."""
    with chromium_page(1400, 1000, 60_000) as opened:
        yield opened
