"""The tracker over HTTP, on the real service: a turn's tool call (a subprocess plugin that
declares `touches_files`) is listed under GET /changes and undone by POST; bad ids are 4xx."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from tests.serve.conftest import make_service, model  # noqa: F401  (the service's own)
from tests.serve.harness import ScriptedModel, Service
from tests.serve.test_plugins import ZIP, package

SOURCE = textwrap.dedent(
    """
    from pathlib import Path
    from hologram.plugins.runtime import PluginApp

    app = PluginApp()

    @app.tool(
        "Keep a note in a file.",
        {"type": "object", "properties": {"name": {"type": "string"}, "text": {"type": "string"}}},
        touches_files=True,
    )
    def scribble_note(args):
        (Path(app.data_dir) / args["name"]).write_text(args["text"])
        return "kept"

    app.run()
    """
)
MANIFEST = '{"name": "scribble", "version": "1.0", "entry": "main.py", "capabilities": ["tools"]}'


def test_a_turns_file_changes_are_listed_and_undone_over_http(
    make_service: Callable[..., Service],  # noqa: F811
    model: ScriptedModel,  # noqa: F811
) -> None:
    service = make_service(env=model.env)
    with service.client() as http:
        answer = http.post(
            "/plugins", content=package({"plugin.json": MANIFEST, "main.py": SOURCE}), headers=ZIP
        )
        assert answer.status_code == 201, answer.text
        args = {"name": "n.txt", "text": "remember the milk\n"}
        model.queue(
            {"tool_calls": [{"id": "w1", "name": "scribble_note", "arguments": args}]},
            {"text": "noted"},
        )
        assert http.post("/input/sync", json={"text": "note it"}).json()["reply"] == "noted"
        listed = http.get("/changes").json()["calls"]
        [call] = [c for c in listed if c["call_id"] == "w1"]
        [change] = call["changes"]
        assert (call["tool"], change["kind"]) == ("scribble_note", "create")
        assert change["path"].endswith("plugin-data/scribble/n.txt")
        assert "+remember the milk" in change["diff"]
        note = service.data_dir / "plugin-data" / "scribble" / "n.txt"
        assert note.read_text() == "remember the milk\n"

        undone = http.post("/changes/w1/undo")
        assert undone.status_code == 200, undone.text
        assert undone.json()["undone_at"] is not None and not note.exists()
        again = http.post("/changes/w1/undo")
        assert again.status_code == 409 and "undone already" in again.json()["error"]
        missing = http.post("/changes/no-such-call/undo")
        assert missing.status_code == 404 and "no-such-call" in missing.json()["error"]
        assert http.get("/changes", params={"limit": 0}).status_code == 400
        assert http.get("/changes", params={"limit": "many"}).status_code == 400
        document = http.get("/openapi.json").json()
    assert "post" in document["paths"]["/changes/{id}/undo"]
    assert "409" in document["paths"]["/changes/{id}/undo"]["post"]["responses"]
    assert "get" in document["paths"]["/changes"]
