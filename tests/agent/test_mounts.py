"""No module writes into another's objects after the fact: each part a module hands another
goes through a mount or connect method of the receiver, called once at boot. A second call,
which would stack or drop the first, is refused."""

from __future__ import annotations

import pytest

from hologram import Kernel
from hologram.llm import estimate_tokens
from hologram.security import GuardedRunner


async def test_boot_mounts_each_part_once_and_a_second_mount_is_refused(kernel: Kernel) -> None:
    state = kernel.state
    assert state.security is not None and state.llm is not None
    assert state.llm.guard is state.security.model_guard

    host = state.stagehost
    assert host is not None and isinstance(host.runner, GuardedRunner)
    with pytest.raises(RuntimeError, match="already mounted"):
        host.mount_runner(host.runner)

    memory = state.memory
    assert memory is not None and memory.estimate is estimate_tokens
    assert memory.media is state.media
    with pytest.raises(RuntimeError, match="already connected"):
        memory.connect_turn_parts(estimate_tokens, state.media)
    assert memory.context.tools is not None
    with pytest.raises(RuntimeError, match="already connected"):
        memory.context.connect_tools(memory.context.tools)

    inputs = kernel.inputs
    assert inputs.residents is not None
    with pytest.raises(RuntimeError, match="already mounted"):
        inputs.mount_residents(inputs.residents)


async def test_one_responder_answers_without_a_model_at_a_time(kernel: Kernel) -> None:
    agent = kernel.state.agent
    assert agent is not None
    diag = agent.without_model  # the recoverydiag built-in's
    assert diag is not None

    async def other(text: str, failure: Exception) -> str:
        return "other"

    with pytest.raises(RuntimeError, match="already answers"):
        agent.mount_without_model(other)
    agent.mount_without_model(diag)  # the same responder again (a plugin restart) is fine
    agent.unmount_without_model(other)  # not the mounted one: nothing changes
    assert agent.without_model == diag
    agent.unmount_without_model(diag)
    agent.mount_without_model(other)
    assert agent.without_model is other
