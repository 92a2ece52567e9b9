"""The other doors for media (issue 18): inputs as multipart/form-data, a body limit that the
`core.media.*` settings decide, and OpenAI `image_url` parts on /v1/chat/completions. Over
real HTTP to the service in its own process, with the scripted model in its own; each bad
body is a 4xx that stores and journals nothing."""

from __future__ import annotations

import base64
import io
import json
import os
from collections.abc import Callable
from pathlib import Path

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionUserMessageParam
from PIL import Image
from pydantic import TypeAdapter

from tests.llm.sdk_types import check_request
from tests.serve.harness import ScriptedModel, Service
from tests.serve.test_media_input import item, media_files, png


def image_parts(model: ScriptedModel) -> list[str]:
    """The image URLs of the last user message of the model's latest request."""
    requests = httpx.get(model.control + "/requests", timeout=10).json()
    body = json.loads(requests[-1]["body"])
    check_request("openai", body)
    user = body["messages"][-1]
    assert user["role"] == "user"
    return [p["image_url"]["url"] for p in user["content"] if p.get("type") == "image_url"]


def data_url(data: bytes, kind: str = "image/png") -> str:
    return f"data:{kind};base64,{base64.b64encode(data).decode()}"


def noise_png(side: int) -> bytes:
    """A PNG that does not compress: about 3 × side² bytes."""
    out = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(3 * side * side)).save(out, "PNG")
    return out.getvalue()


def form(boundary: str, fields: dict[str, str], files: list[tuple[str, str, bytes]]) -> bytes:
    """A multipart/form-data body written out by hand, so a test can cut it short."""
    out = bytearray()
    for name, value in fields.items():
        out += f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
        out += value.encode() + b"\r\n"
    for filename, kind, data in files:
        out += (
            f'--{boundary}\r\nContent-Disposition: form-data; name="media"; '
            f'filename="{filename}"\r\nContent-Type: {kind}\r\n\r\n'
        ).encode()
        out += data + b"\r\n"
    out += f"--{boundary}--\r\n".encode()
    return bytes(out)


def test_images_sent_as_a_form_reach_the_model_and_an_interrupt_takes_its_level(
    make_service: Callable[..., Service], model: ScriptedModel, data_dir: Path
) -> None:
    red, blue = png("red"), png("blue")
    model.queue({"text": "Red and blue."}, {"text": "Noted."})
    service = make_service(env=model.env)
    with service.client() as http:
        answer = http.post(
            "/input/sync",
            data={"text": "what are these?"},
            files=[("media", ("r.png", red, "image/png")), ("media", ("b.png", blue, ""))],
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["reply"] == "Red and blue."
        assert image_parts(model) == [data_url(red), data_url(blue)]
        assert {p.name for p in media_files(data_dir)} == {
            json.loads(p.read_text())["digest"] for p in (data_dir / "media").rglob("*.json")
        }

        urgent = http.post(
            "/interrupt",
            data={"text": "and this one", "level": "2"},
            files={"media": ("r.png", red, "image/png")},
        )
        assert urgent.status_code == 202, urgent.text
        assert urgent.json()["level"] == 2
        record = http.get(f"/inputs/{urgent.json()['id']}").json()
        assert record["text"] == "and this one"
        # The same image sent again, as a form this time, is still one stored copy.
        assert len(media_files(data_dir)) == 2


def test_the_media_settings_decide_the_body_limit_of_the_media_endpoints_only(
    make_service: Callable[..., Service], data_dir: Path
) -> None:
    photo = noise_png(520)
    assert 780_000 < len(photo) < 850_000
    body = json.dumps({"text": "a photo", "media": [item(photo)]}).encode()
    assert len(body) > 1 << 20  # over the small limit the other endpoints keep
    service = make_service()
    with service.client() as http:
        sent = http.post("/input", content=body, headers={"content-type": "application/json"})
        assert sent.status_code == 202, sent.text
        assert len(media_files(data_dir)) == 1

        settings = http.put("/settings", content=body, headers={"content-type": "application/json"})
        assert settings.status_code == 413
        assert "core.media" not in settings.json()["error"]

        for key, value in (("core.media.max_items", 1), ("core.media.max_bytes", 900_000)):
            assert http.put("/settings", json={"key": key, "value": value}).status_code == 200
        two = json.dumps({"text": "three", "media": [item(photo)] * 3}).encode()
        over = http.post("/input", content=two, headers={"content-type": "application/json"})
        assert over.status_code == 413
        assert "core.media.max_items=1" in over.json()["error"], over.text
        # Within the body limit, the store names the item that breaks the setting.
        assert (
            http.put(
                "/settings", json={"key": "core.media.max_bytes", "value": 780_000}
            ).status_code
            == 200
        )
        one = http.post("/input", content=body, headers={"content-type": "application/json"})
        assert one.status_code == 413 and "core.media.max_bytes" in one.json()["error"]
        as_form = http.post("/input", data={"text": "x"}, files={"media": ("p.png", photo)})
        assert as_form.status_code == 413 and "core.media.max_bytes" in as_form.json()["error"]
        assert len(media_files(data_dir)) == 1


def test_bad_forms_are_each_a_4xx_and_leave_nothing_behind(
    make_service: Callable[..., Service], data_dir: Path
) -> None:
    good = png()
    corrupt = bytearray(good)
    corrupt[45] ^= 0xFF  # inside the image data: its chunk's CRC no longer matches
    kind = "multipart/form-data; boundary=XyZ"
    cases: list[tuple[bytes, str, int, str]] = [
        (
            form("XyZ", {"text": "hi"}, [("a.png", "image/png", good)]),
            "multipart/form-data",
            400,
            "boundary",
        ),
        (form("XyZ", {"text": "hi"}, [("a.png", "image/png", good)])[:-40], kind, 400, "truncated"),
        (
            form("XyZ", {"text": "hi"}, [("a.png", "image/png", good)]),
            "multipart/form-data; boundary=Other",
            400,
            "malformed",
        ),
        (
            form("XyZ", {"text": "hi"}, [("c.png", "image/png", bytes(corrupt))]),
            kind,
            415,
            "damaged PNG",
        ),
        (
            form("XyZ", {"text": "hi"}, [("t.png", "image/png", b"words, not a picture")]),
            kind,
            415,
            "declared image/png",
        ),
        (
            form("XyZ", {"text": "hi"}, [("a.png", "image/png", good)] * 9),
            kind,
            413,
            "core.media.max_items",
        ),
        (form("XyZ", {"text": "hi", "colour": "red"}, []), kind, 400, "unknown form field"),
        (form("XyZ", {"text": "hi", "level": "L9"}, []), kind, 400, "'level'"),
        (form("XyZ", {"text": "hi", "timeout": "soon"}, []), kind, 400, "'timeout'"),
        (form("XyZ", {"level": "L1"}, [("a.png", "image/png", good)]), kind, 400, "'text'"),
        (b"\x00" * 8, "image/png", 415, "multipart/form-data"),
    ]
    service = make_service()
    with service.client() as http:
        for body, content_type, status, words in cases:
            for path in ("/input", "/input/sync", "/interrupt"):
                answer = http.post(path, content=body, headers={"content-type": content_type})
                assert answer.status_code == status, (path, words, answer.text)
                assert words in answer.json()["error"], (path, answer.text)
        damaged = http.post("/input", json={"text": "hi", "media": [item(bytes(corrupt))]})
        assert damaged.status_code == 415 and "damaged PNG" in damaged.json()["error"]
        assert media_files(data_dir) == []
        assert http.get("/inputs/1").status_code == 404
        fine = http.post(
            "/input", content=form("XyZ", {"text": "ok"}, []), headers={"content-type": kind}
        )
        assert fine.status_code == 202, fine.text
        # A browser sends a file name as UTF-8 bytes; an empty file input is no file.
        named = form("XyZ", {"text": "照片"}, [("照片.png", "image/png", good), ("", "", b"")])
        photo = http.post("/input", content=named, headers={"content-type": kind})
        assert photo.status_code == 202, photo.text
        assert len(media_files(data_dir)) == 1


def test_an_openai_image_url_part_with_a_data_url_reaches_the_model(
    make_service: Callable[..., Service], model: ScriptedModel, data_dir: Path
) -> None:
    photo = png("green")
    model.queue({"text": "Green."})
    service = make_service(env=model.env)
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "which colour?"},
            {"type": "image_url", "image_url": {"url": data_url(photo), "detail": "low"}},
        ],
    }
    TypeAdapter(ChatCompletionUserMessageParam).validate_python(message)
    client = openai.OpenAI(base_url=service.url + "/v1", api_key="x", max_retries=0, timeout=60)
    completion = client.chat.completions.create(model="hologram", messages=[message])
    assert completion.choices[0].message.content == "Green."
    assert image_parts(model) == [data_url(photo)]
    assert len(media_files(data_dir)) == 1


REFUSED_IMAGES = [
    ("https://example.com/cat.png", 400, "not fetched"),
    ("http://127.0.0.1:9/cat.png", 400, "not fetched"),
    ("ftp://example.com/cat.png", 400, "data: URL"),
    ("data:image/png,rawbytes", 400, "must be base64"),
    ("data:image/png;base64,@@@", 400, "not base64"),
    (data_url(b"not a picture at all"), 415, "declared image/png"),
]


def test_an_openai_image_the_companion_cannot_take_is_refused(
    service: Service, data_dir: Path
) -> None:
    client = openai.OpenAI(base_url=service.url + "/v1", api_key="x", max_retries=0, timeout=60)
    for url, status, words in REFUSED_IMAGES:
        message = {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": url}},
            ],
        }
        TypeAdapter(ChatCompletionUserMessageParam).validate_python(message)
        with pytest.raises(openai.APIStatusError) as refused:
            client.chat.completions.create(model="hologram", messages=[message])
        assert refused.value.status_code == status, url
        assert words in refused.value.message, url
        error = refused.value.body
        assert isinstance(error, dict) and error["type"] == "invalid_request_error"
    assert media_files(data_dir) == []
    with service.client() as http:
        assert http.get("/inputs/1").status_code == 404
    # An earlier message's image is context the client holds: not fetched, not refused.
    earlier = {
        "role": "user",
        "content": [{"type": "image_url", "image_url": {"url": REFUSED_IMAGES[0][0]}}],
    }
    fine = client.chat.completions.create(
        model="hologram",
        messages=[
            earlier,
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "still here?"},
        ],
    )
    assert "still here?" in (fine.choices[0].message.content or "")


async def test_an_mcp_client_sends_an_image_with_its_input(
    make_service: Callable[..., Service], model: ScriptedModel, data_dir: Path
) -> None:
    import mcp_types as types
    from mcp import Client

    photo = png("purple")
    model.queue({"text": "Purple."})
    service = make_service(env=model.env)
    # The image as the official SDK's own ImageContent carries it.
    image = types.ImageContent(
        type="image", data=base64.b64encode(photo).decode(), mime_type="image/png"
    )
    async with Client(service.url + "/mcp", read_timeout_seconds=60) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "images" in tools["send_input"].input_schema["properties"]
        said = await client.call_tool(
            "send_input",
            {"text": "colour?", "images": [{"data": image.data, "mime_type": image.mime_type}]},
        )
        assert not said.is_error, said.content
        assert said.content[0].text == "Purple."
        lying = await client.call_tool(
            "send_input",
            {
                "text": "and?",
                "images": [{"data": base64.b64encode(b"words").decode(), "mime_type": "image/png"}],
            },
        )
        assert lying.is_error and "declared image/png" in lying.content[0].text
        broken = await client.call_tool("send_input", {"text": "x", "images": [{"data": "@@"}]})
        assert broken.is_error and "base64" in broken.content[0].text
    assert image_parts(model) == [data_url(photo)]
    assert len(media_files(data_dir)) == 1
