"""The embedding SPI and the built-in embedders."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from hologram.config import CORE_DEFAULTS, ConfigRegistry
from hologram.events import EventBus
from hologram.kernel import KernelTasks
from hologram.llm import ScriptedModelServer
from hologram.memory import (
    BUILTIN_EMBEDDERS,
    EmbedderRegistry,
    HashedNgramEmbedder,
    HttpEmbedder,
    StaticEmbedder,
    TfidfBigramEmbedder,
    choose_embedder,
)
from hologram.sdk import (
    EmbedderError,
    EmbedderNotFound,
    EmbedderUnavailable,
    EventType,
    ModalityUnsupported,
)

TEXTS = ["我喜欢在北京喝咖啡", "I like drinking coffee in Beijing", "北京的咖啡很好喝", "雨天"]


def test_default_embedder_gives_unit_float32_rows_and_relates_similar_texts() -> None:
    embedder = HashedNgramEmbedder()
    vectors = embedder.embed_texts(TEXTS)
    assert vectors.dtype == np.float32 and vectors.shape == (4, embedder.dim)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    sims = vectors @ vectors.T
    assert sims[0, 2] > 0.2 and sims[0, 2] > 3 * abs(sims[0, 3])


def test_default_embedder_vectors_are_the_same_in_another_process() -> None:
    # Python's own hash() is salted per process; stored vectors must survive a restart.
    code = (
        "import json; from hologram.memory import HashedNgramEmbedder;"
        f"print(json.dumps(HashedNgramEmbedder().embed_texts({TEXTS!r}).tolist()))"
    )
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    here = HashedNgramEmbedder().embed_texts(TEXTS)
    assert np.allclose(np.asarray(json.loads(other.stdout), np.float32), here)


def test_an_embedder_refuses_a_modality_outside_its_space() -> None:
    for embedder in (HashedNgramEmbedder(), TfidfBigramEmbedder()):
        with pytest.raises(ModalityUnsupported):
            embedder.embed_images([b"\x89PNG"])


def test_fitting_tfidf_changes_its_fingerprint() -> None:
    uniform = TfidfBigramEmbedder()
    fitted = TfidfBigramEmbedder.fit(["咖啡很好喝", "今天下雨", "咖啡馆"])
    assert uniform.fingerprint != fitted.fingerprint
    vectors = fitted.embed_texts(["咖啡", "下雨"])
    assert vectors.shape == (2, 2048) and float(vectors[0] @ vectors[1]) == pytest.approx(0.0)


def test_an_unknown_embedder_name_is_an_error_listing_the_registered_ones() -> None:
    registry = EmbedderRegistry(BUILTIN_EMBEDDERS, discover=False)
    with pytest.raises(EmbedderNotFound, match="registered: default, http, static, tfidf"):
        registry.create("chineseclip")


def test_embedders_register_through_entry_points(tmp_path: Path, monkeypatch) -> None:
    package = tmp_path / "toy_embedder.py"
    package.write_text(
        "from hologram.memory import TfidfBigramEmbedder\n"
        "def make(options):\n    return TfidfBigramEmbedder(dim=int(options.get('dim', 64)))\n"
    )
    dist = tmp_path / "toy_embedder-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-embedder\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[hologram.embedders]\ntoy = toy_embedder:make\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = EmbedderRegistry(BUILTIN_EMBEDDERS)
    assert "toy" in registry.names()
    assert registry.create("toy", {"dim": 32}).dim == 32


def test_static_embedder_reads_word_vectors_and_splits_chinese_with_jieba(tmp_path: Path) -> None:
    vec = tmp_path / "words.vec"
    vec.write_text(
        "5 3\n咖啡 1 0 0\ncoffee 1 0.1 0\n下雨 0 1 0\nrain 0 1 0.1\n猫 0 0 1\nbroken line\n"
    )
    embedder = StaticEmbedder(vec)
    assert embedder.dim == 3 and embedder.fingerprint.endswith("/3/v1")
    a, b, c, empty = embedder.embed_texts(["我爱喝咖啡", "coffee please", "下雨了", "unknown"])
    assert float(a @ b) > 0.99 and float(a @ c) == pytest.approx(0.0)
    assert not empty.any(), "a text with no known word must be the zero vector"


def test_a_missing_static_file_is_an_error_naming_the_setting(tmp_path: Path) -> None:
    with pytest.raises(EmbedderUnavailable, match=r"does not exist; set core\.memory\.embedders"):
        BUILTIN_EMBEDDERS["static"]({"path": str(tmp_path / "absent.vec")})


@pytest.fixture
async def config(tmp_path: Path) -> ConfigRegistry:
    registry = await ConfigRegistry.open(tmp_path / "config.db", environ={})
    registry.register(CORE_DEFAULTS)
    yield registry
    await registry.close()


async def test_a_configured_embedder_that_cannot_load_is_an_error_without_a_fallback(
    config: ConfigRegistry, tmp_path: Path
) -> None:
    await config.set("core.memory.embedder", "static")
    await config.set("core.memory.embedders.static.path", str(tmp_path / "absent.vec"))
    with pytest.raises(EmbedderUnavailable):
        choose_embedder(config, EmbedderRegistry(BUILTIN_EMBEDDERS, discover=False))


async def test_a_configured_fallback_is_used_and_announced(
    config: ConfigRegistry, tmp_path: Path, caplog, tasks: KernelTasks
) -> None:
    await config.set("core.memory.embedder", "static")
    await config.set("core.memory.embedder_fallback", "tfidf")
    bus, seen = EventBus(tasks=tasks.scope("events")), []
    bus.subscribe(EventType.MEMORY_DEGRADED, seen.append)
    embedder = choose_embedder(config, EmbedderRegistry(BUILTIN_EMBEDDERS, False), bus.emit)
    assert embedder.name == "tfidf"
    (event,) = seen
    assert event.payload.configured == "static" and event.payload.using == "tfidf"
    assert "degraded to 'tfidf'" in caplog.text


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    """An OpenAI-compatible /embeddings endpoint: one axis per known word."""

    words = ("coffee", "rain", "cat")
    requests: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), **body}
        )
        data = [
            {"object": "embedding", "index": i,
             "embedding": [float(w in text) for w in self.words] + [0.5]}
            for i, text in enumerate(body["input"])
        ]  # fmt: skip
        payload = json.dumps({"object": "list", "data": data[::-1], "model": body["model"]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(payload.encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _EmbeddingsHandler)
    _EmbeddingsHandler.requests = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_http_embedder_speaks_the_openai_embeddings_format(server: str) -> None:
    embedder = HttpEmbedder(server, "toy-embed", dim=4, api_key="k", batch_size=2)
    vectors = embedder.embed_texts(["coffee", "rain", "coffee and cat"])
    assert vectors.shape == (3, 4) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert vectors[0] @ vectors[1] < vectors[0] @ vectors[2], "rows out of index order"
    first = _EmbeddingsHandler.requests[0]
    assert first["path"] == "/v1/embeddings" and first["auth"] == "Bearer k"
    assert first["model"] == "toy-embed" and first["input"] == ["coffee", "rain"]
    assert embedder.fingerprint == "http:toy-embed/4/v1"
    embedder.close()


def test_http_embedder_reports_a_dimension_other_than_configured(server: str) -> None:
    with pytest.raises(EmbedderError, match="returned 4 dimensions"):
        HttpEmbedder(server, "toy-embed", dim=8).embed_texts(["coffee"])


def test_http_embedder_reports_an_unreachable_server() -> None:
    embedder = HttpEmbedder("http://127.0.0.1:9/v1", "m", dim=4, timeout=2)
    with pytest.raises(EmbedderUnavailable, match="unreachable"):
        embedder.embed_texts(["coffee"])


def test_http_embedder_without_settings_says_which_to_set() -> None:
    with pytest.raises(EmbedderUnavailable, match=r"embedders\.http\.base_url"):
        BUILTIN_EMBEDDERS["http"]({})


async def test_the_configured_http_embedder_relates_texts_through_the_scripted_servers_embeddings(
    config: ConfigRegistry,
) -> None:
    """The `http` embedder as configured, over real HTTP to the scripted model server's
    /v1/embeddings (the stand-in for every remote model in the suite)."""
    async with ScriptedModelServer() as server:
        await config.set("core.memory.embedder", "http")
        for key, value in (
            ("base_url", server.base_url),
            ("model", "embed-small"),
            ("dim", server.embedding_dim),
            ("api_key", "sk-embed"),
        ):
            await config.set(f"core.memory.embedders.http.{key}", value)
        embedder = choose_embedder(config, EmbedderRegistry(BUILTIN_EMBEDDERS, discover=False))
        texts = ["the cat sat on the mat", "a cat sat there", "stock prices fell"]
        # The embedder blocks; the server runs on this loop, so the call goes to a thread.
        vectors = await asyncio.to_thread(embedder.embed_texts, texts)
        embedder.close()
    assert vectors.shape == (3, server.embedding_dim)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    [request] = server.requests
    assert (
        request.path == "/v1/embeddings" and request.headers["authorization"] == "Bearer sk-embed"
    )
    assert request.json["model"] == "embed-small" and request.json["input"] == texts
