"""cfgmgr through a turn with the scripted model: the agent changes a setting the policy
allows, is refused one it does not and an unknown key, and never reads a secret."""

from __future__ import annotations

import json

from hologram import Kernel
from hologram.llm import ScriptedModelServer
from tests.agent.conftest import Recorder
from tests.agent.test_turn_pipeline import tool_messages

SECRET = "sk-a-credential-never-shown-42"


async def tool_answer(kernel: Kernel, model: ScriptedModelServer, tool: str, **args: str) -> str:
    model.queue_tool_call(tool, args).queue_text("done")
    await kernel.say(f"please use {tool}")
    return str(tool_messages(model.last_request)[-1]["content"])


async def test_the_agent_changes_an_allowed_setting_and_it_is_a_config_changed_event(
    kernel: Kernel, model: ScriptedModelServer, events: Recorder
) -> None:
    answer = await tool_answer(
        kernel, model, "cfgmgr_set", key="core.agent.max_tool_rounds", value="4"
    )

    assert answer == "core.agent.max_tool_rounds is now 4"
    assert kernel.config.get("core.agent.max_tool_rounds") == 4
    changed = [e.payload for e in events.of("config_changed")]
    assert (changed[-1].key, changed[-1].value) == ("core.agent.max_tool_rounds", 4)


async def test_a_setting_outside_the_policy_is_refused(
    kernel: Kernel, model: ScriptedModelServer
) -> None:
    answer = await tool_answer(kernel, model, "cfgmgr_set", key="core.security.enabled", value="0")

    assert "outside what cfgmgr may touch" in answer
    assert kernel.config.get("core.security.enabled") is True
    own = await tool_answer(
        kernel, model, "cfgmgr_set", key="core.security.cfgmgr.allow", value='["core."]'
    )
    assert "only the owner changes it" in own


async def test_an_unknown_key_is_refused_naming_the_closest(
    kernel: Kernel, model: ScriptedModelServer
) -> None:
    answer = await tool_answer(
        kernel, model, "cfgmgr_set", key="core.agent.max_tool_round", value="4"
    )

    assert "unknown setting" in answer and "core.agent.max_tool_rounds" in answer


async def test_a_secret_is_set_but_never_shown(kernel: Kernel, model: ScriptedModelServer) -> None:
    key = "core.security.credential.mail.secret"
    answer = await tool_answer(kernel, model, "cfgmgr_set", key=key, value=SECRET)
    assert kernel.config.get(key) == SECRET and SECRET not in answer

    listed = await tool_answer(kernel, model, "cfgmgr_get", prefix="core.security.credential.")

    assert SECRET not in listed
    assert {"key": key, "value": "(secret: set)", "default": None}.items() <= next(
        e for e in json.loads(listed) if e["key"] == key
    ).items()
    assert all(SECRET not in json.dumps(r.json) for r in model.requests)


async def test_cfgmgr_is_private_to_the_owner(kernel: Kernel, model: ScriptedModelServer) -> None:
    assert kernel.state.security is not None
    model.queue_tool_call("cfgmgr_set", {"key": "core.agent.max_tool_rounds", "value": "1"})
    model.queue_text("done")

    await kernel.say("change it", "qq")

    assert "private to the owner" in tool_messages(model.last_request)[-1]["content"]
    assert kernel.config.get("core.agent.max_tool_rounds") == 10
