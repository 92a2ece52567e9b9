"""The security-owned objects that stand in at the kernel's outward-facing mount points.

Each keeps the interface of what it replaces, so the modules on the other side call it as
before: `GuardedRunner` is the stage host's tool runner, `ModelGuard` sits in the provider
manager's request path, `GuardedOutputChannels` is the output channel table.

They know the firewall only as a `Guard`, the few things they ask of it; the firewall builds
them and hands itself in, so the import runs one way (firewall, then proxy).
"""

from __future__ import annotations

import contextvars
import dataclasses
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any, Protocol

from hologram.channels import OutputChannels
from hologram.llm import ChatMessage, CompletionRequest, CompletionResponse, StreamChunk, TextBlock
from hologram.sdk import ToolCall, ToolDef, ToolResult
from hologram.security.credentials import CredentialGate
from hologram.security.policy import INTERNAL, Principal, ToolPolicy
from hologram.stages import ToolRunner

SEND_PREFIX = "output_send__"

acting_for: contextvars.ContextVar[Principal | None] = contextvars.ContextVar(
    "hologram_security_principal", default=None
)
"""The principal whose tool is running. A tool that runs tools itself (a child agent) does
so inside it, so the calls it makes inherit the rights of the input that started it."""


class Guard(Protocol):
    """What the proxies ask of the firewall (`Firewall` is one)."""

    gate: CredentialGate

    @property
    def enabled(self) -> bool:
        """The switch as the settings say now."""
        ...

    def policy(self) -> ToolPolicy: ...

    def take_principal(self, call_id: str) -> Principal | None:
        """Whom the call `call_id` runs for, once (None: it came through no turn)."""
        ...

    def refuse(self, call: ToolCall, reason: str, principal: Principal) -> ToolResult: ...

    def inbound(self, result: ToolResult, call: ToolCall) -> ToolResult:
        """A tool's result on its way to the model, scrubbed and reviewed."""
        ...


class GuardedRunner:
    """The tool runner behind the firewall: policy first, credentials filled in only for
    the call itself, the result scrubbed and reviewed before the model sees it."""

    def __init__(self, inner: ToolRunner, firewall: Guard) -> None:
        self.inner = inner
        self._firewall = firewall

    def __getattr__(self, name: str) -> Any:
        # validator(), check_arguments() and whatever the runner grows stay reachable.
        return getattr(self.inner, name)

    async def execute(self, call: ToolCall, tools: Mapping[str, ToolDef]) -> ToolResult:
        firewall = self._firewall
        if not firewall.enabled:
            return await self.inner.execute(call, tools)
        # A call that came through no turn (nor through a tool of one) was made by kernel code
        # or the owner through the Python API (`stagehost.execute`): the internal principal.
        principal = firewall.take_principal(call.id) or acting_for.get() or INTERNAL
        if call.name not in tools or call.arguments_error is not None:
            return firewall.inbound(await self.inner.execute(call, tools), call)
        reason = firewall.policy().decide(call.name, call.arguments, principal)
        if reason is not None:
            return firewall.refuse(call, reason, principal)
        if not call.name.startswith(SEND_PREFIX):
            # Output channels face outward: what is sent through them keeps its aliases.
            call = dataclasses.replace(call, arguments=firewall.gate.unmask_deep(call.arguments))
        token = acting_for.set(principal)
        try:
            result = await self.inner.execute(call, tools)
        finally:
            acting_for.reset(token)
        return firewall.inbound(result, call)


class ModelGuard:
    """What the provider manager does to each request and response: secrets out as aliases
    (messages, tool arguments, tool descriptions), and the same on the way back."""

    def __init__(self, firewall: Guard) -> None:
        self._firewall = firewall

    def outbound(self, request: CompletionRequest) -> CompletionRequest:
        gate = self._firewall.gate
        gate.sync()
        if not self._firewall.enabled or gate.longest == 0:
            return request
        return dataclasses.replace(
            request,
            messages=[self._message(m) for m in request.messages],
            tools=[
                t
                if not gate.contains_secret(t.description)
                else dataclasses.replace(t, description=gate.mask(t.description))
                for t in request.tools
            ],
        )

    def _message(self, message: ChatMessage) -> ChatMessage:
        gate = self._firewall.gate
        content = message.content
        if isinstance(content, str):
            content = gate.mask(content)
        else:
            content = [
                dataclasses.replace(b, text=gate.mask(b.text)) if isinstance(b, TextBlock) else b
                for b in content
            ]
        return dataclasses.replace(
            message,
            content=content,
            tool_calls=[_masked_call(c, gate.mask_deep) for c in message.tool_calls],
            reasoning_content=gate.mask(message.reasoning_content),
        )

    def inbound(self, response: CompletionResponse) -> CompletionResponse:
        gate = self._firewall.gate
        if not self._firewall.enabled or gate.longest == 0:
            return response
        return dataclasses.replace(
            response,
            content=gate.mask(response.content),
            reasoning_content=gate.mask(response.reasoning_content),
            tool_calls=[_masked_call(c, gate.mask_deep) for c in response.tool_calls],
        )

    async def stream(self, chunks: AsyncIterator[StreamChunk]) -> AsyncGenerator[StreamChunk, None]:
        """Scrub a streamed answer; a secret cut across two chunks is still caught."""
        gate = self._firewall.gate
        text, reasoning = gate.scrubber(), gate.scrubber()
        async for chunk in chunks:
            if chunk.restart:
                # The answer begins again: what was held back of the old one is void.
                text, reasoning = gate.scrubber(), gate.scrubber()
            if chunk.done:
                yield dataclasses.replace(
                    chunk,
                    content=text.feed(chunk.content) + text.flush(),
                    reasoning_content=reasoning.feed(chunk.reasoning_content) + reasoning.flush(),
                    response=None if chunk.response is None else self.inbound(chunk.response),
                )
                continue
            content = text.feed(chunk.content)
            thought = reasoning.feed(chunk.reasoning_content)
            if content == chunk.content and thought == chunk.reasoning_content:
                yield chunk  # nothing masked or held back: no copy on the way to the reader
            else:
                yield dataclasses.replace(chunk, content=content, reasoning_content=thought)


def _masked_call(call: ToolCall, mask: Any) -> ToolCall:
    return dataclasses.replace(call, arguments=mask(call.arguments))


class GuardedOutputChannels(OutputChannels):
    """The output channel table that hands every channel text with aliases, never secrets:
    a reply or a send the model asks for goes to a plugin, which is outside. Both the turn's
    reply and the generated `output_send__*` tools come through `send`."""

    def __init__(self, firewall: Guard) -> None:
        super().__init__()
        self._firewall = firewall

    async def send(
        self, name: str, payload: str, meta: dict[str, Any] | str | None = None, type: str = "text"
    ) -> str:
        if self._firewall.enabled:
            gate = self._firewall.gate
            gate.sync()
            payload = gate.mask(payload) if isinstance(payload, str) else payload
            meta = gate.mask_deep(meta)
        return await super().send(name, payload, meta, type)
