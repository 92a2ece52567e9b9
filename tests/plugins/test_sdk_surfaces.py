"""The SDK's memory, knowledge and social surfaces and `inject_input_sync`, reached from a real
subprocess plugin over JSON-RPC, from a Lua plugin through its sandbox, and from a built-in
plugin directly; each within the capabilities its manifest declares."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hologram import Kernel
from hologram.llm import ScriptedModelServer
from hologram.plugins import KernelSDK, PluginRegistry
from hologram.plugins.surfaces import KnowledgeSurface, MemorySurface, SocialSurface
from hologram.sdk import (
    SDK_CALLS,
    KnowledgeAPI,
    KnowledgeEntry,
    KnowledgeHit,
    MemoryAPI,
    Person,
    Recalled,
    SocialAPI,
    ToolCall,
    ToolDef,
)

# One tool that runs whatever SDK call the test names, so each test shows the call it makes
# and the answer the plugin got back (or the error it was refused with). NAME becomes the
# plugin's name.
CALLER = """
    from hologram.plugins.runtime import PluginApp

    app = PluginApp()

    @app.tool("Call the kernel's SDK.", {
        "type": "object",
        "properties": {"method": {"type": "string"}, "params": {"type": "object"}},
        "required": ["method"]})
    async def NAME_call(args):
        import json
        try:
            result = await app.sdk.call(args["method"], **args.get("params", {}))
        except Exception as exc:
            return "refused: " + str(exc)
        return json.dumps(result, ensure_ascii=False)

    @app.tool("Remember, then recall, through the runtime's own helpers.", {
        "type": "object", "properties": {"note": {"type": "string"}}, "required": ["note"]})
    async def NAME_note(args):
        import json
        doc = await app.sdk.memory.commit(args["note"])
        found = await app.sdk.memory.recall(args["note"], top=3)
        return json.dumps({"doc": doc, "found": found}, ensure_ascii=False)

    @app.tool("Ask the agent and wait for its reply.", {
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    async def NAME_ask(args):
        reply = await app.sdk.inject_input_sync(args["text"], "notebook")
        return "the agent said: " + reply

    app.run()
"""


@pytest.fixture
def caller(registry: PluginRegistry, write_plugin: Callable[..., Path]) -> Callable[..., Any]:
    """caller(name, capabilities) -> a started subprocess plugin with the CALLER tools."""

    async def load(name: str, capabilities: list[str]) -> str:
        await registry.load_dir(
            write_plugin(name, CALLER.replace("NAME", name), capabilities=capabilities)
        )
        return name

    return load


async def sdk_call(kernel: Kernel, plugin: str, method: str, **params: Any) -> Any:
    """What the plugin got back for `method`: decoded JSON, or the refusal text."""
    result = await kernel.state.stagehost.execute(
        ToolCall("c", f"{plugin}_call", {"method": method, "params": params})
    )
    assert not result.is_error, result.content
    if result.content.startswith("refused: "):
        return result.content
    return json.loads(result.content)


# ---- memory ---------------------------------------------------------------------------------


async def test_a_subprocess_plugin_commits_a_note_to_memory_and_recalls_it(
    kernel: Kernel, caller: Callable[..., Any]
) -> None:
    await caller("diary", ["tools", "memory"])

    result = await kernel.state.stagehost.execute(
        ToolCall("c", "diary_note", {"note": "the boiler was serviced on Tuesday"})
    )

    answer = json.loads(result.content)
    stored = kernel.state.coldcontext.get(answer["doc"])
    assert stored is not None and stored.input == "the boiler was serviced on Tuesday"
    assert stored.source == "plugin:diary"
    assert [f["text"] for f in answer["found"] if f["source"] == "coldcontext"] == [
        "the boiler was serviced on Tuesday"
    ]


async def test_memory_recall_includes_the_graphs_facts(
    kernel: Kernel, caller: Callable[..., Any]
) -> None:
    await kernel.state.graph.social.relate("Alice", "sister_of", "Bob")
    await caller("diary", ["tools", "memory"])

    found = await sdk_call(kernel, "diary", "sdk.memory.recall", query="Alice", top=5)

    graph = [f["text"] for f in found if f["source"] == "graph"]
    assert any("Alice" in line and "sister_of" in line and "Bob" in line for line in graph)


async def test_memory_without_the_declared_capability_is_refused_naming_it(
    kernel: Kernel, caller: Callable[..., Any]
) -> None:
    await caller("nomem", ["tools"])

    answer = await sdk_call(kernel, "nomem", "sdk.memory.commit", content="secret")

    assert answer.startswith("refused:") and "'memory'" in answer and "plugin.json" in answer
    assert len(kernel.state.coldcontext) == 0


async def test_a_bad_memory_call_is_answered_with_the_reason(
    kernel: Kernel, caller: Callable[..., Any]
) -> None:
    await caller("diary", ["tools", "memory"])

    answer = await sdk_call(kernel, "diary", "sdk.memory.recall", query="x", top=500)

    assert answer.startswith("refused:") and "'top' must be an integer from 1 to 20" in answer


# ---- knowledge ------------------------------------------------------------------------------


async def test_a_subprocess_plugin_adds_knowledge_and_finds_it_again(
    kernel: Kernel, caller: Callable[..., Any]
) -> None:
    await caller("library", ["tools", "knowledge"])

    name = await sdk_call(
        kernel,
        "library",
        "sdk.knowledge.create",
        name="cooking/sourdough",
        content="Feed the starter twice a day; bake at 230 degrees.",
    )
    hits = await sdk_call(kernel, "library", "sdk.knowledge.search", query="sourdough starter")
    entry = await sdk_call(kernel, "library", "sdk.knowledge.get", name="cooking/sourdough")
    listed = await sdk_call(kernel, "library", "sdk.knowledge.list", category="cooking")

    assert name == "cooking/sourdough"
    assert (await kernel.state.knowledge.get("cooking/sourdough")).content.startswith("Feed")
    assert hits[0]["name"] == "cooking/sourdough" and hits[0]["score"] > 0
    assert entry["content"] == "Feed the starter twice a day; bake at 230 degrees."
    assert listed == ["cooking/sourdough"]


async def test_a_refused_knowledge_name_comes_back_with_the_knowledge_bases_reason(
    kernel: Kernel, caller: Callable[..., Any]
) -> None:
    await caller("library", ["tools", "knowledge"])

    answer = await sdk_call(
        kernel, "library", "sdk.knowledge.create", name="../escape", content="x"
    )

    assert answer.startswith("refused:") and "knowledge name" in answer
    assert "not start with '.'" in answer
    assert len(kernel.state.knowledge) == 0


# ---- social ---------------------------------------------------------------------------------


async def test_an_external_plugin_reads_social_memory(
    kernel: Kernel, caller: Callable[..., Any]
) -> None:
    social = kernel.state.graph.social
    await social.set_trait("Alice", "humour", "dry")
    await social.relate("Alice", "friend_of", "Carol")
    await caller("people", ["tools", "social"])

    person = await sdk_call(kernel, "people", "sdk.social.person", name="Alice")
    trait = await sdk_call(kernel, "people", "sdk.social.trait", name="Alice", trait="humour")
    relations = await sdk_call(kernel, "people", "sdk.social.relations", name="Alice")
    persons = await sdk_call(kernel, "people", "sdk.social.persons")

    assert person["traits"] == {"humour": "dry"}
    assert trait == "dry"
    assert any("friend_of" in line and "Carol" in line for line in relations)
    assert set(persons) >= {"Alice", "Carol"}


async def test_social_memory_is_read_only_for_an_external_plugin(
    kernel: Kernel, caller: Callable[..., Any]
) -> None:
    await caller("people", ["tools", "social"])

    relate = await sdk_call(
        kernel, "people", "sdk.social.relate", person="Eve", relation="spies_on", other="Bob"
    )
    trait = await sdk_call(kernel, "people", "sdk.social.set_trait", name="Eve", trait="x", value=1)

    for answer in (relate, trait):
        assert answer.startswith("refused:") and "'social' is read-only" in answer
    assert "Eve" not in await kernel.state.graph.store.mention_counts(["Eve"])


async def test_an_unknown_person_is_answered_with_the_graphs_reason(
    kernel: Kernel, caller: Callable[..., Any]
) -> None:
    await caller("people", ["tools", "social"])

    answer = await sdk_call(kernel, "people", "sdk.social.person", name="Nobody")

    assert answer.startswith("refused:") and "no entity named 'Nobody'" in answer


async def test_a_built_in_plugin_writes_social_memory(
    kernel: Kernel, registry: PluginRegistry
) -> None:
    sdk = KernelSDK("builtin_probe", registry.parts)

    await sdk.social.set_trait("Dora", "likes", "tea")
    await sdk.social.relate("Dora", "neighbour_of", "Alice")

    assert await sdk.social.trait("Dora", "likes") == "tea"
    assert any("neighbour_of" in r for r in await sdk.social.relations("Dora"))


# ---- the SDK's protocols ------------------------------------------------------------------------

PROTOCOLS = {
    "memory": (MemoryAPI, MemorySurface),
    "knowledge": (KnowledgeAPI, KnowledgeSurface),
    "social": (SocialAPI, SocialSurface),
}


def _shape(function: Callable[..., Any]) -> list[tuple[str, Any, Any]]:
    """Parameter names, kinds and defaults: what a caller relies on (annotations aside)."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


def test_the_kernels_surfaces_answer_every_call_of_the_sdks_protocols() -> None:
    for surface_name, (protocol, surface) in PROTOCOLS.items():
        calls = [n for n, v in vars(protocol).items() if inspect.iscoroutinefunction(v)]
        assert calls, protocol
        for call in calls:
            implemented = getattr(surface, call, None)
            assert implemented is not None, f"{surface.__name__} lacks {call}"
            assert _shape(implemented) == _shape(getattr(protocol, call)), (surface, call)
            assert f"{surface_name}.{call}" in SDK_CALLS, f"no RPC for {surface_name}.{call}"


async def test_the_surfaces_answer_with_the_sdks_plain_data(
    kernel: Kernel, registry: PluginRegistry
) -> None:
    sdk = KernelSDK("builtin_probe", registry.parts)
    await sdk.memory.commit("the boiler was serviced on Tuesday")
    await sdk.social.relate("Dora", "neighbour_of", "Alice")
    await sdk.knowledge.create("cooking/sourdough", "Feed the starter twice a day.")

    recalled = await sdk.memory.recall("boiler Dora", top=5)
    hits = await sdk.knowledge.search("sourdough starter")
    entry = await sdk.knowledge.get("cooking/sourdough")
    person = await sdk.social.person("Dora")

    assert {r["source"] for r in recalled} == {"coldcontext", "graph"}
    assert all(set(r) == set(Recalled.__annotations__) for r in recalled)
    assert hits and all(set(h) == set(KnowledgeHit.__annotations__) for h in hits)
    assert set(entry) == set(KnowledgeEntry.__annotations__)
    assert set(person) == set(Person.__annotations__)


def test_importing_the_sdk_loads_no_numpy() -> None:
    """A plugin process imports the SDK; the embedder protocol's arrays are annotations only."""
    probe = "import sys, hologram.sdk, hologram.sdk.embedding; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---- inject_input_sync ------------------------------------------------------------------------


async def test_inject_input_sync_waits_for_the_reply_of_its_turn(
    kernel: Kernel, caller: Callable[..., Any], model: ScriptedModelServer
) -> None:
    await caller("relay", ["tools", "inject"])
    model.queue_text("pong")

    # Outside a turn, as a plugin would from its own event or timer: inside one of the
    # agent's turns the injected input would wait behind the very turn that waits for it.
    result = await kernel.state.stagehost.execute(ToolCall("c", "relay_ask", {"text": "ping"}))

    assert result.content == "the agent said: pong"
    user = [m for m in model.last_request.json["messages"] if m["role"] == "user"]
    assert "ping" in user[-1]["content"]


async def test_inject_input_sync_without_the_capability_is_refused(
    kernel: Kernel, caller: Callable[..., Any], model: ScriptedModelServer
) -> None:
    await caller("mute", ["tools"])

    answer = await sdk_call(kernel, "mute", "sdk.inject", text="hi", channel="notebook", wait=True)

    assert answer.startswith("refused:") and "'inject'" in answer
    assert model.requests == []


# ---- Lua -----------------------------------------------------------------------------------

LUA = """
sdk.register_tool("lib_run", "Run one SDK call from Lua.", nil, function(args)
  if args.what == "note" then
    local id = sdk.memory.commit(args.text)
    local found = sdk.memory.recall(args.text, 3)
    return {id = id, first = found[1].text}
  elseif args.what == "knowledge" then
    sdk.knowledge.create("notes/lua", args.text)
    return sdk.knowledge.search(args.text)[1]
  elseif args.what == "person" then
    return sdk.social.person(args.text).traits
  elseif args.what == "relate" then
    local ok, err = pcall(sdk.social.relate, "Eve", "spies_on", "Bob")
    return {ok = ok, err = err}
  elseif args.what == "ask" then
    return sdk.inject_input_sync(args.text, "notebook")
  end
end)
"""


@pytest.fixture
async def lua_lib(registry: PluginRegistry, write_plugin: Callable[..., Path]) -> str:
    capabilities = ["tools", "memory", "knowledge", "social"]
    await registry.load_dir(
        write_plugin("lualib", LUA, entry="main.lua", capabilities=capabilities)
    )
    return "lib_run"


async def lua(kernel: Kernel, what: str, text: str = "") -> tuple[Any, bool]:
    result = await kernel.state.stagehost.execute(
        ToolCall("c", "lib_run", {"what": what, "text": text})
    )
    try:
        return json.loads(result.content), result.is_error
    except ValueError:
        return result.content, result.is_error


async def test_a_lua_plugin_commits_and_recalls_memory(kernel: Kernel, lua_lib: str) -> None:
    answer, is_error = await lua(kernel, "note", "the cat is called Miso")

    assert not is_error, answer
    assert answer["first"] == "the cat is called Miso"
    assert kernel.state.coldcontext.get(answer["id"]).source == "plugin:lualib"


async def test_a_lua_plugin_adds_and_searches_knowledge(kernel: Kernel, lua_lib: str) -> None:
    answer, is_error = await lua(kernel, "knowledge", "umbrellas open upwards")

    assert not is_error and answer["name"] == "notes/lua"


async def test_a_lua_plugin_reads_social_memory_and_may_not_write_it(
    kernel: Kernel, lua_lib: str
) -> None:
    await kernel.state.graph.social.set_trait("Alice", "humour", "dry")

    traits, _ = await lua(kernel, "person", "Alice")
    relate, _ = await lua(kernel, "relate")

    assert traits == {"humour": "dry"}
    assert relate["ok"] is False and "'social' is read-only" in relate["err"]


async def test_a_lua_call_outside_the_declared_capabilities_is_a_lua_error_naming_it(
    kernel: Kernel, lua_lib: str, model: ScriptedModelServer
) -> None:
    answer, is_error = await lua(kernel, "ask", "hello")

    assert is_error and "'inject'" in answer and "plugin.json" in answer
    assert model.requests == []


# ---- security profiles per input ----------------------------------------------------------


async def test_a_plugin_selects_a_declared_profile_per_input_and_an_undeclared_one_is_refused(
    kernel: Kernel,
    registry: PluginRegistry,
    write_plugin: Callable[..., Path],
    model: ScriptedModelServer,
) -> None:
    profiles = {"qq.owner": {"internal": True}, "qq.guest": {}}
    source = CALLER.replace("NAME", "qq")
    await registry.load_dir(
        write_plugin("qq", source, capabilities=["tools", "inject"], security_profiles=profiles)
    )
    written: list[dict[str, Any]] = []
    kernel.state.stagehost.register_tool(
        ToolDef("files_write", "Write a file.", handler=lambda args: written.append(args) or "ok"),
        owner="files",
    )

    async def ask(profile: str) -> Any:
        model.queue_tool_call("files_write", {"path": "a.txt"}).queue_text("answered")
        return await sdk_call(
            kernel,
            "qq",
            "sdk.inject",
            wait=True,
            text=f"write it ({profile})",
            channel="notebook",
            user_id="42",
            security_profile=profile,
        )

    # The notebook is an internal channel: only the selected profile makes this an outsider.
    assert await ask("qq.guest") == "answered"
    refused = [m for m in model.requests[-1].json["messages"] if m["role"] == "tool"]
    assert "private to the owner" in refused[-1]["content"] and written == []
    assert await ask("qq.owner") == "answered"
    assert written == [{"path": "a.txt"}], "the owner's profile may call a hard-private tool"
    before = len(model.requests)
    answer = await ask("qq.admin")
    assert answer.startswith("refused:") and "declared: qq.guest, qq.owner" in answer
    assert len(model.requests) == before, "an undeclared profile never reaches the agent"


async def test_inject_input_sync_from_inside_a_turn_is_refused_instead_of_waiting_for_itself(
    kernel: Kernel, registry: PluginRegistry, model: ScriptedModelServer
) -> None:
    sdk = KernelSDK("builtin_probe", registry.parts)

    async def ask_back(args: dict[str, Any]) -> str:
        return await sdk.inject_input_sync("and what do you think?", "notebook")

    sdk.register_tool(ToolDef("probe_ask", "Ask the agent back.", handler=ask_back))
    model.queue_tool_call("probe_ask", {}).queue_text("gave up asking")
    result = await kernel.say("use the probe")
    assert result == "gave up asking"
    tool = [m for m in model.requests[-1].json["messages"] if m["role"] == "tool"]
    assert "would wait for itself" in tool[-1]["content"]
    assert len(model.requests) == 2, "no input was queued behind the turn"


# ---- the LLM surface ------------------------------------------------------------------------


async def test_an_external_plugin_lists_reads_and_switches_the_model_source(
    kernel: Kernel, caller: Callable[..., Any]
) -> None:
    await kernel.config.set("core.llm.sources.backup.base_url", "http://127.0.0.1:9/v1")
    await kernel.config.set("core.llm.sources.backup.model", "backup-model")
    await caller("switcher", ["tools", "llm"])

    sources = await sdk_call(kernel, "switcher", "sdk.llm.list_sources")
    before = await sdk_call(kernel, "switcher", "sdk.llm.current_source")
    switched = await sdk_call(kernel, "switcher", "sdk.llm.set_source", name="backup")
    unknown = await sdk_call(kernel, "switcher", "sdk.llm.set_source", name="nowhere")

    assert [s["source"] for s in sources] == ["default", "backup"]
    assert (before, switched) == ("default", "backup")
    assert await sdk_call(kernel, "switcher", "sdk.llm.current_source") == "backup"
    assert unknown.startswith("refused:") and "no LLM source 'nowhere'" in unknown


async def test_the_llm_surface_without_the_capability_is_refused_naming_it(
    kernel: Kernel, caller: Callable[..., Any]
) -> None:
    await caller("nollm", ["tools"])

    answer = await sdk_call(kernel, "nollm", "sdk.llm.set_source", name="default")

    assert answer.startswith("refused:") and "'llm'" in answer


async def test_a_built_in_plugin_asks_the_model_directly(
    kernel: Kernel, registry: PluginRegistry, model: ScriptedModelServer
) -> None:
    model.queue_text("a direct answer")

    answer = await KernelSDK("builtin_probe", registry.parts).llm.chat("hello", system="be brief")

    assert answer == "a direct answer"
    assert model.last_request.json["messages"][0] == {"role": "system", "content": "be brief"}


LUA_LLM = """
sdk.register_tool("lua_llm", "Use the LLM surface from Lua.", nil, function(args)
  local before = sdk.llm.current_source()
  local names = {}
  for i, source in ipairs(sdk.llm.list_sources()) do names[i] = source.source end
  local ok, err = pcall(sdk.llm.set_source, "nowhere")
  sdk.llm.set_source(args.to)
  return {before = before, names = names, unknown = err, after = sdk.llm.current_source(),
          has_chat = sdk.llm.chat ~= nil}
end)
"""


async def test_a_lua_plugin_lists_reads_and_switches_the_model_source(
    kernel: Kernel, registry: PluginRegistry, write_plugin: Callable[..., Path]
) -> None:
    await kernel.config.set("core.llm.sources.backup.base_url", "http://127.0.0.1:9/v1")
    await kernel.config.set("core.llm.sources.backup.model", "backup-model")
    await registry.load_dir(
        write_plugin("lualm", LUA_LLM, entry="main.lua", capabilities=["tools", "llm"])
    )

    result = await kernel.state.stagehost.execute(ToolCall("c", "lua_llm", {"to": "backup"}))

    answer = json.loads(result.content)
    assert not result.is_error, answer
    assert (answer["before"], answer["names"]) == ("default", ["default", "backup"])
    assert "no LLM source 'nowhere'" in answer["unknown"]
    assert (answer["after"], answer["has_chat"]) == ("backup", False)
    assert kernel.config.get("core.llm.active_source") == "backup"


async def test_the_lua_llm_surface_without_the_capability_is_a_lua_error_naming_it(
    kernel: Kernel, registry: PluginRegistry, write_plugin: Callable[..., Path]
) -> None:
    await registry.load_dir(write_plugin("luanollm", LUA_LLM, entry="main.lua"))

    result = await kernel.state.stagehost.execute(ToolCall("c", "lua_llm", {"to": "default"}))

    assert result.is_error and "'llm'" in result.content and "plugin.json" in result.content
    assert kernel.config.get("core.llm.active_source") != "backup"
