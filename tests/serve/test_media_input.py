"""Media sent with an input over HTTP (issue 18): base64 in the JSON body reaches the model's
request as an image part, GET /media/{digest} gives the bytes back, and each bad item is a
clear 4xx that stores and journals nothing. Over real HTTP to the service in its own process,
with the scripted model in its own."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Callable
from pathlib import Path

import httpx
from PIL import Image

from tests.llm.sdk_types import check_request
from tests.serve.harness import ScriptedModel, Service


def png(color: str = "red") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 6), color).save(out, "PNG")
    return out.getvalue()


def item(data: bytes, kind: str = "image/png", name: str = "x.png") -> dict[str, str]:
    return {"type": kind, "data": base64.b64encode(data).decode(), "name": name}


def media_files(root: Path) -> list[Path]:
    return [p for p in (root / "media").rglob("*") if p.is_file() and p.suffix != ".json"]


def test_a_posted_png_reaches_the_model_and_reads_back(
    make_service: Callable[..., Service], model: ScriptedModel, data_dir: Path
) -> None:
    photo = png()
    model.queue({"text": "A red square."})
    service = make_service(env=model.env)
    with service.client() as http:
        answer = http.post("/input/sync", json={"text": "what is this?", "media": [item(photo)]})
        assert answer.status_code == 200, answer.text
        assert answer.json()["reply"] == "A red square."
        requests = httpx.get(model.control + "/requests", timeout=10).json()
        body = json.loads(requests[-1]["body"])
        check_request("openai", body)
        user = body["messages"][-1]
        url = f"data:image/png;base64,{base64.b64encode(photo).decode()}"
        assert {"type": "image_url", "image_url": {"url": url}} in [
            {"type": p["type"], "image_url": {"url": p["image_url"]["url"]}}
            for p in user["content"]
            if p.get("type") == "image_url"
        ]

        [stored] = media_files(data_dir)
        digest = stored.name
        got = http.get(f"/media/{digest}")
        assert got.status_code == 200
        assert got.content == photo
        assert got.headers["content-type"] == "image/png"
        assert got.headers["etag"] == f'"{digest}"'
        assert (
            http.get(f"/media/{digest}", headers={"if-none-match": got.headers["etag"]}).status_code
            == 304
        )


def test_bad_media_is_a_clear_4xx_and_stores_nothing(
    make_service: Callable[..., Service], data_dir: Path
) -> None:
    service = make_service()
    with service.client() as http:
        cases = [
            ([{"type": "image/png", "data": "not base64!!"}], 400, "base64"),
            ([item(b"plain words, not a picture")], 415, "media item 0"),
            ([item(png(), "image/jpeg")], 415, "media item 0"),
            ([item(png())] * 9, 413, "core.media.max_items"),
            ([{"data": 3}], 400, "'data'"),
            ("a picture", 400, "'media'"),
        ]
        for media, status, words in cases:
            answer = http.post("/input", json={"text": "look", "media": media})
            assert answer.status_code == status, (media, answer.text)
            assert words in answer.json()["error"]
        put = http.put("/settings", json={"key": "core.media.max_bytes", "value": 100})
        assert put.status_code == 200, put.text
        noisy = io.BytesIO()
        Image.frombytes("RGB", (32, 32), bytes(range(256)) * 12).save(noisy, "PNG")
        big = http.post("/interrupt", json={"text": "look", "media": [item(noisy.getvalue())]})
        assert big.status_code == 413 and "core.media.max_bytes" in big.json()["error"]

        assert http.get("/media/" + "0" * 64).status_code == 404
        assert http.get("/media/not-a-digest").status_code == 404
        assert media_files(data_dir) == []
        # Nothing was journaled, and the service still takes input.
        assert http.get("/inputs/1").status_code == 404
        assert http.post("/input", json={"text": "plain"}).status_code == 202


def test_the_typed_client_sends_media_and_reads_it_back(
    make_service: Callable[..., Service], model: ScriptedModel, data_dir: Path
) -> None:
    from hologram.client import Client, HologramError
    from hologram.media import Upload

    photo = png("yellow")
    model.queue({"text": "Yellow."})
    service = make_service(env=model.env)
    with Client(service.url) as hologram:
        result = hologram.say("colour?", media=[Upload(photo, "image/png", "y.png")])
        assert result.reply == "Yellow."
        [stored] = media_files(data_dir)
        assert hologram.media(stored.name) == photo
        try:
            hologram.send("lying", media=[Upload(photo, "image/gif")])
        except HologramError as exc:
            assert exc.status == 415
        else:
            raise AssertionError("a lying type was taken")
