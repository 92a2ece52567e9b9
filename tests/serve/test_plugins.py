"""Plugins over HTTP: a `.hmap` made here is installed into the running service, its
subprocess tool answers in a turn through the scripted model, and it is uninstalled; bad
packages are refused with the registry's reason and leave the plugins folder as it was."""

from __future__ import annotations

import io
import json
import random
import textwrap
import zipfile
from collections.abc import Callable
from pathlib import Path

from tests.serve.harness import ScriptedModel, Service

ZIP = {"content-type": "application/zip"}
MANIFEST = {"name": "shout", "version": "1.0", "entry": "main.py", "capabilities": ["tools"]}
SOURCE = textwrap.dedent(
    """
    from hologram.plugins.runtime import PluginApp

    app = PluginApp()

    @app.tool("Shout the text.", {"type": "object", "properties": {"text": {"type": "string"}}})
    def shout_text(args):
        return args["text"].upper() + "!"

    app.run()
    """
)


def package(files: dict[str, str | bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def shout_package() -> bytes:
    return package({"plugin.json": json.dumps(MANIFEST), "main.py": SOURCE})


def installed(data_dir: Path) -> list[str]:
    folder = data_dir / "plugins"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_an_uploaded_subprocess_plugin_runs_in_a_turn_and_uninstalls(
    make_service: Callable[..., Service], model: ScriptedModel
) -> None:
    service = make_service(env=model.env)
    with service.client() as http:
        answer = http.post("/plugins", content=shout_package(), headers=ZIP)
        assert answer.status_code == 201, answer.text
        row = answer.json()
        assert (row["name"], row["state"], row["started"]) == ("shout", "running", True)
        assert row["tools"] == ["shout_text"]
        assert isinstance(row["pid"], int)
        assert installed(service.data_dir) == ["shout"]

        model.queue(
            {"tool_calls": [{"id": "t1", "name": "shout_text", "arguments": {"text": "hello"}}]},
            {"text": "it said so"},
        )
        result = http.post("/input/sync", json={"text": "shout hello for me"}).json()
        assert result["reply"] == "it said so"
        assert result["rounds"] == 2
        turn = http.get("/context", params={"limit": 1}).json()["events"][-1]
        assert turn["tools"] == [["shout_text", "HELLO!"]]

        gone = http.delete("/plugins/shout")
        assert gone.status_code == 200
        assert gone.json() == {"uninstalled": "shout"}
        listed = [p["name"] for p in http.get("/plugins").json()["plugins"]]
        again = http.delete("/plugins/shout")
    assert "shout" not in listed
    assert installed(service.data_dir) == []
    assert again.status_code == 404
    assert "no plugin 'shout'" in again.json()["error"]


def test_a_zip_slip_package_is_refused_and_nothing_is_written(service: Service) -> None:
    evil = package({"plugin.json": json.dumps(MANIFEST), "main.py": SOURCE, "../evil.sh": "x"})
    with service.client() as http:
        answer = http.post("/plugins", content=evil, headers=ZIP)
        refused = http.get("/plugins").json()["refused"]
    assert answer.status_code == 400
    assert "zip slip" in answer.json()["error"]
    assert "zip slip" in refused["package"]
    assert installed(service.data_dir) == []
    assert not (service.data_dir.parent / "evil.sh").exists()


def test_an_oversize_package_gets_413_at_the_registry_limit(service: Service) -> None:
    padded = package(
        {
            "plugin.json": json.dumps(MANIFEST),
            "main.py": SOURCE,
            "pad.bin": random.Random(7).randbytes(5000),
        }
    )
    with service.client() as http:
        http.put(
            "/settings", json={"key": "core.plugins.max_package_bytes", "value": 2000}
        ).raise_for_status()
        too_big = http.post("/plugins", content=padded, headers=ZIP)
        small = http.post("/plugins", content=b"not a zip at all", headers=ZIP)
    assert len(padded) > 2000
    assert too_big.status_code == 413
    assert "over the limit of 2000" in too_big.json()["error"]
    assert small.status_code == 400
    assert "not a .hmap package" in small.json()["error"]
    assert installed(service.data_dir) == []


def test_a_built_in_plugin_cannot_be_uninstalled_and_uploads_must_be_zips(
    service: Service,
) -> None:
    with service.client() as http:
        builtin = http.delete("/plugins/pluginmgr")
        as_json = http.post("/plugins", json={"package": "x"})
        bad_flag = http.post("/plugins?replace=sure", content=shout_package(), headers=ZIP)
        names = [p["name"] for p in http.get("/plugins").json()["plugins"]]
    assert builtin.status_code == 403
    assert "only plugins in" in builtin.json()["error"]
    assert "pluginmgr" in names
    assert as_json.status_code == 415
    assert "application/zip" in as_json.json()["error"]
    assert bad_flag.status_code == 400


def test_a_second_install_needs_replace(service: Service) -> None:
    with service.client() as http:
        assert http.post("/plugins", content=shout_package(), headers=ZIP).status_code == 201
        twice = http.post("/plugins", content=shout_package(), headers=ZIP)
        replaced = http.post("/plugins?replace=true", content=shout_package(), headers=ZIP)
    assert twice.status_code == 400
    assert "already installed" in twice.json()["error"]
    assert replaced.status_code == 201
    assert replaced.json()["state"] == "running"
