"""The provider manager (spec: ProviderManager): sources tried in order, with fallback.

Sources are read from the config on every call, so a changed setting takes effect on the
next call and a source whose settings changed gets a fresh provider and a clean slate.

What a failure does:
  the provider said when to come back (429 or 5xx with Retry-After / retry-after-ms / RetryInfo),
  or is overloaded (529, an overloaded event mid-stream) -> retried within the source after
      that delay (bounded by core.llm.retry_wait_max_s, with jitter, within the call's
      deadline), up to core.llm.retries times; then as below
  unusable settings, an adapter that will not load   -> unavailable until its config changes
  401/403, a spent quota                             -> set aside for core.llm.cooldown_s, or
                                                        until its config changes
  429, 5xx, timeout, connection, malformed response, other 4xx -> unavailable for a backoff
                                                        that doubles per failure in a row
  the prompt is too long (ContextTooLong)            -> goes to the caller, which shortens it:
                                                        the request is at fault, not the source
A source whose model reads no images is sent the request with each image as a text note
(hologram.llm.vision), made for that source alone: a later source that reads images still
gets them.
The seed source `default` with no base_url is served by the offline scripted model, and only
while no other source is configured. If every source is backing off, they are tried anyway
rather than failing a turn that might succeed. Every skip, failure and fallback is logged
and published on the bus.
"""

from __future__ import annotations

import logging
import random
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from hologram.config import ConfigRegistry, LLMSettings, SourceSettings, key_of
from hologram.events import EventBus
from hologram.llm.adapter import AdapterLibrary
from hologram.llm.budget import (
    TokenBudget,
    compute_budget,
    warn_fallback_window,
)
from hologram.llm.errors import (
    AdapterError,
    AllProvidersFailed,
    ContextTooLong,
    FailureKind,
    ProviderError,
)
from hologram.llm.messages import CompletionRequest, CompletionResponse
from hologram.llm.provider import LuaAdaptedProvider, SourceConfig
from hologram.llm.scripted_server import OFFLINE_MODEL_NAME, ScriptedModelServer
from hologram.llm.sources import OFFLINE_SOURCE, SourceProblem, read_source, source_names
from hologram.llm.streaming import StreamChunk
from hologram.llm.usage import UsageLedger
from hologram.llm.vision import describe, images_as_notes
from hologram.sdk import (
    Clock,
    Payload,
    ProviderFallback,
    ProviderImagesAsText,
    ProviderOffline,
    ProviderRecovered,
    ProviderRetry,
    ProvidersExhausted,
    ProviderSkipped,
    ProviderSwitched,
    ProviderUnavailable,
)

log = logging.getLogger(__name__)


@dataclass(slots=True)
class SourceState:
    """One source as the manager sees it right now."""

    name: str
    fingerprint: tuple[Any, ...]
    provider: LuaAdaptedProvider | None = None
    adapter: str = ""
    offline: bool = False
    failures: int = 0
    kind: FailureKind | None = None
    reason: str = ""
    retry_at: float | None = None  # monotonic; None with a kind: until the config changes
    history: list[str] = field(default_factory=list)

    @property
    def blocked(self) -> bool:
        """Unavailable until its config changes."""
        return self.kind is not None and self.retry_at is None

    def backing_off(self, now: float) -> bool:
        return self.retry_at is not None and now < self.retry_at

    def cooling(self, now: float) -> bool:
        """Set aside for the cool-down: never tried early, even when nothing else is left."""
        return self.kind is not None and self.kind.cools_down and self.backing_off(now)

    def describe(self, now: float) -> str:
        if self.blocked:
            return f"unavailable until its config changes: {self.reason}"
        if self.cooling(now):
            assert self.retry_at is not None
            return (
                f"set aside for {self.retry_at - now:.0f} s more (or until its config "
                f"changes) after: {self.reason}"
            )
        if self.backing_off(now):
            assert self.retry_at is not None
            return f"backing off for {self.retry_at - now:.1f} s after: {self.reason}"
        return "available"


class RequestGuard(Protocol):
    """What stands in the request path when the security module is mounted: it rewrites
    each request before any source sees it, and each answer before the caller does."""

    def outbound(self, request: CompletionRequest) -> CompletionRequest: ...

    def inbound(self, response: CompletionResponse) -> CompletionResponse: ...

    def stream(self, chunks: AsyncIterator[StreamChunk]) -> AsyncGenerator[StreamChunk, None]: ...


Attempt = Callable[[LuaAdaptedProvider, CompletionRequest], AsyncGenerator[StreamChunk, None]]
"""One try of one source: the chunks of its answer (a plain call's is one chunk)."""


async def _answer_once(
    provider: LuaAdaptedProvider, request: CompletionRequest
) -> AsyncGenerator[StreamChunk, None]:
    yield StreamChunk(done=True, response=await provider.chat(request))


def _stream_of(
    provider: LuaAdaptedProvider, request: CompletionRequest
) -> AsyncGenerator[StreamChunk, None]:
    return provider.chat_stream(request)


class ProviderManager:
    def __init__(
        self,
        config: ConfigRegistry,
        events: EventBus | None,
        clock: Clock,
        adapters: AdapterLibrary | None = None,
        *,
        guard: RequestGuard | None = None,
    ) -> None:
        self.config = config
        self.events = events
        self.clock = clock
        self.adapters = adapters or AdapterLibrary()
        self._states: dict[str, SourceState] = {}
        self._offline: ScriptedModelServer | None = None
        self._guessed_windows: set[str] = set()
        """Models whose context window is a guess and has been warned about (once each:
        the budget is asked for on every turn)."""
        #: Stands in every request when the firewall is mounted; fixed for the manager's life.
        self.guard = guard
        self.usage = UsageLedger(lambda: self.settings.prices)
        """Tokens and cost of every answer, per source, day and channel."""
        self._random = random.Random()
        self._settings_read: tuple[int, LLMSettings | None] = (-1, None)
        self._refreshed: tuple[int, tuple[Any, ...]] | None = None
        """The config's version and the adapter files' stamps the sources were last built
        from: `refresh`, asked before every model call, reads the settings again only when
        one of them has changed."""

    # ---- sources ----------------------------------------------------------------------------

    @property
    def settings(self) -> LLMSettings:
        # Read eight times a turn: read again only once a stored setting has changed.
        version, settings = self._settings_read
        if version != self.config.version or settings is None:
            settings = self.config.read(LLMSettings)
            self._settings_read = (self.config.version, settings)
        return settings

    @property
    def active_source(self) -> str:
        return self.settings.active_source

    @property
    def offline_server(self) -> ScriptedModelServer | None:
        """The offline scripted model, when it is running."""
        return self._offline

    async def set_active(self, name: str) -> None:
        """Make `name` the source tried first (stored as the active source)."""
        await self.refresh()
        if name not in self._states:
            raise ValueError(f"no LLM source {name!r}; sources: {', '.join(self._states)}")
        previous = self.active_source
        await self.config.set(key_of(LLMSettings, "active_source"), name)
        log.info("LLM source switched from %s to %s", previous, name)
        self._emit(ProviderSwitched(llm_source=name, previous=previous))

    def ordered_sources(self) -> list[str]:
        """Source names in the order a call tries them (spec: OrderedProviders)."""
        names = list(self._states)
        active = self.active_source
        if active in names:
            names.remove(active)
            names.insert(0, active)
        return names

    def status(self) -> list[dict[str, Any]]:
        now = self.clock.monotonic()
        return [
            {
                "source": name,
                "adapter": state.adapter,
                "offline": state.offline,
                "state": state.describe(now),
                "failures": state.failures,
                "max_context_tokens": state.provider.max_context_tokens if state.provider else 0,
                "accepts_images": state.provider.accepts_images if state.provider else False,
            }
            for name in self.ordered_sources()
            for state in (self._states[name],)
        ]

    def provider(self, name: str) -> LuaAdaptedProvider:
        state = self._states.get(name)
        if state is None or state.provider is None:
            raise LookupError(f"source {name!r} has no provider ({self._why(name)})")
        return state.provider

    def _why(self, name: str) -> str:
        state = self._states.get(name)
        return "not configured" if state is None else state.describe(self.clock.monotonic())

    async def refresh(self) -> None:
        """Bring the sources in line with the config: new, changed and removed ones."""
        if self._refreshed == (self.config.version, self._adapter_stamps()):
            return
        names = source_names(self.config)
        seed = self.config.read(SourceSettings, name=OFFLINE_SOURCE)
        if len(names) > 1 and not seed.base_url:
            # The offline model stands in only when no LLM is configured at all: once real
            # sources exist, an unset seed source is simply not one of them.
            names.remove(OFFLINE_SOURCE)
        for gone in [n for n in self._states if n not in names]:
            await self._drop(gone)
        for name in names:
            read = read_source(self.config, name)
            fingerprint = self._fingerprint(read)
            state = self._states.get(name)
            if state is not None and state.fingerprint == fingerprint:
                continue
            if state is not None:
                log.info("LLM source %s changed; rebuilding it", name)
                await self._drop(name)
            self._states[name] = await self._build(name, read, fingerprint)
        self._states = {name: self._states[name] for name in names}
        self._refreshed = (self.config.version, self._adapter_stamps())

    def _adapter_stamps(self) -> tuple[Any, ...]:
        """Which file each source's adapter is and when it was written: an adapter edited,
        added to the user's directory or removed is a change of its sources."""
        return tuple(
            self._adapter_stamp(state.fingerprint[0].adapter)
            for state in self._states.values()
            if isinstance(state.fingerprint[0], SourceConfig)
        )

    def _adapter_stamp(self, adapter: str) -> Any:
        try:
            path = self.adapters.find(adapter)
            return (str(path), path.stat().st_mtime_ns)
        except (AdapterError, OSError):
            return None

    def _fingerprint(self, read: SourceConfig | SourceProblem) -> tuple[Any, ...]:
        if isinstance(read, SourceProblem):
            return read.fingerprint
        return (read, self._adapter_stamp(read.adapter))

    async def _build(
        self, name: str, read: SourceConfig | SourceProblem, fingerprint: tuple[Any, ...]
    ) -> SourceState:
        state = SourceState(name, fingerprint)
        if isinstance(read, SourceProblem):
            self._block(state, FailureKind.CONFIG, read.message)
            return state
        source = read
        if name == OFFLINE_SOURCE and not source.base_url:
            source = await self._offline_source(source)
            state.offline = True
        state.adapter = source.adapter
        try:
            adapter = self.adapters.load(source.adapter)
        except AdapterError as exc:
            self._block(state, FailureKind.ADAPTER, str(exc))
            return state
        state.provider = LuaAdaptedProvider(
            source,
            adapter,
            lua_http_timeout=self.settings.lua_http_timeout_s,
        )
        return state

    async def _offline_source(self, source: SourceConfig) -> SourceConfig:
        if self._offline is None:
            self._offline = await ScriptedModelServer(offline=True).start()
        log.warning(
            "no LLM is configured (core.llm.sources.default.base_url is empty): the offline "
            "scripted model answers, on %s",
            self._offline.base_url,
        )
        self._emit(
            ProviderOffline(
                llm_source=source.name,
                base_url=self._offline.base_url,
                model=OFFLINE_MODEL_NAME,
                message="the offline scripted model answers: no LLM is configured",
            )
        )
        # The offline model speaks the OpenAI wire format, whatever adapter was configured.
        return SourceConfig(
            name=source.name,
            adapter="openai",
            base_url=self._offline.base_url,
            model=OFFLINE_MODEL_NAME,
            context_window=source.context_window,
            timeout_s=source.timeout_s,
        )

    async def _drop(self, name: str) -> None:
        state = self._states.pop(name)
        if state.provider is not None:
            await state.provider.aclose()

    async def close(self) -> None:
        self._refreshed = None
        for name in list(self._states):
            await self._drop(name)
        if self._offline is not None:
            await self._offline.stop()
            self._offline = None

    # ---- availability -----------------------------------------------------------------------

    def _block(self, state: SourceState, kind: FailureKind, reason: str) -> None:
        state.kind, state.reason, state.retry_at = kind, reason, None
        log.error("LLM source %s is unavailable until its config changes: %s", state.name, reason)
        self._emit(
            ProviderUnavailable(
                llm_source=state.name,
                kind=str(kind),
                reason=reason,
                until_config_changes=True,
                retry_in=None,
            )
        )

    def _failed(self, state: SourceState, error: ProviderError) -> None:
        state.failures += 1
        settings = self.settings
        if error.kind.cools_down:
            pause = settings.cooldown_s
            aside = f"set aside for {pause:.0f} s (or until its config changes)"
        elif error.kind.until_config_changes:
            self._block(state, error.kind, error.reason)
            return
        else:
            first, longest = settings.backoff_s, settings.backoff_max_s
            pause = min(first * 2 ** (state.failures - 1), longest)
            if error.retry_after is not None:
                pause = max(pause, error.retry_after)  # never sooner than the provider asked
            aside = f"set aside for {pause:.1f} s"
        state.kind, state.reason = error.kind, error.reason
        state.retry_at = self.clock.monotonic() + pause
        log.warning(
            "LLM source %s failed (%s); %s: %s", state.name, error.kind, aside, error.reason
        )
        self._emit(
            ProviderUnavailable(
                llm_source=state.name,
                kind=str(error.kind),
                reason=error.reason,
                status=error.status,
                until_config_changes=error.kind.cools_down,
                retry_in=pause,
            )
        )

    def _retry_wait(self, error: ProviderError, tries: int, deadline: float) -> float | None:
        """How long to wait before asking the same source again, or None to move on: only
        a provider that said when (or is overloaded) is asked again, within the bounds."""
        settings = self.settings
        if tries >= settings.retries:
            return None
        if error.kind is FailureKind.OVERLOADED:
            wait = error.retry_after
            if wait is None:
                wait = settings.overloaded_delay_s * 2**tries
        elif error.kind in (FailureKind.RATE_LIMITED, FailureKind.SERVER):
            wait = error.retry_after
        else:
            return None
        if wait is None or wait > settings.retry_wait_max_s:
            return None
        wait += self._random.uniform(0.0, settings.retry_jitter * wait)
        if self.clock.monotonic() + wait > deadline:
            return None
        return wait

    def _retrying(
        self, state: SourceState, error: ProviderError, attempt: int, wait: float
    ) -> None:
        log.warning(
            "LLM source %s: %s; asking it again in %.2f s (retry %d): %s",
            state.name,
            error.kind,
            wait,
            attempt,
            error.reason,
        )
        self._emit(
            ProviderRetry(
                llm_source=state.name,
                kind=str(error.kind),
                reason=error.reason,
                status=error.status,
                attempt=attempt,
                wait=round(wait, 3),
                provider_delay=error.retry_after,
            )
        )

    def _too_long(self, state: SourceState, error: ContextTooLong) -> None:
        log.warning("LLM source %s: the prompt is too long: %s", state.name, error.reason)

    def _succeeded(self, state: SourceState) -> None:
        if state.kind is not None:
            log.info("LLM source %s answers again", state.name)
            self._emit(ProviderRecovered(llm_source=state.name))
        state.failures, state.kind, state.reason, state.retry_at = 0, None, "", None

    def reset(self, name: str) -> None:
        """Forget a source's failures (an operator who fixed something outside the config)."""
        if name in self._states:
            self._succeeded(self._states[name])

    def _candidates(self, failures: list[tuple[str, str]]) -> list[SourceState]:
        now = self.clock.monotonic()
        ready: list[SourceState] = []
        waiting: list[SourceState] = []
        for name in self.ordered_sources():
            state = self._states[name]
            if state.blocked or state.backing_off(now):
                why = state.describe(now)
                log.info("LLM source %s skipped: %s", name, why)
                self._emit(ProviderSkipped(llm_source=name, reason=why))
                failures.append((name, f"skipped, {why}"))
                if not state.blocked and not state.cooling(now):
                    waiting.append(state)
                continue
            ready.append(state)
        if not ready and waiting:
            names = ", ".join(s.name for s in waiting)
            log.warning("every LLM source is backing off; trying %s anyway", names)
            self._emit(
                ProviderSkipped(
                    llm_source=None, reason=f"every source is backing off; trying {names} anyway"
                )
            )
            ready = waiting
        return ready

    def _answered(
        self, state: SourceState, first_choice: str, failures: list[tuple[str, str]]
    ) -> None:
        self._succeeded(state)
        if state.name != first_choice:
            failed = [name for name, _ in failures]
            log.warning("LLM fallback: %s answered after %s", state.name, ", ".join(failed))
            self._emit(
                ProviderFallback(llm_source=state.name, first_choice=first_choice, failed=failed)
            )

    def _exhausted(self, failures: list[tuple[str, str]]) -> AllProvidersFailed:
        error = AllProvidersFailed(failures)
        log.error("%s", error)
        self._emit(ProvidersExhausted(failures=[list(f) for f in failures]))
        return error

    # ---- calls ------------------------------------------------------------------------------

    async def chat(self, request: CompletionRequest) -> CompletionResponse:
        """Ask the sources in order until one answers; `AllProvidersFailed` names them all.
        A cancelled call is not a failure of the source: the cancellation goes up as is."""
        if self.guard is not None:
            request = self.guard.outbound(request)
        response: CompletionResponse | None = None
        async for chunk in self._fallback(request, _answer_once):
            response = chunk.response
        assert response is not None  # `_answer_once` yields exactly the answer
        return response if self.guard is None else self.guard.inbound(response)

    async def chat_stream(self, request: CompletionRequest) -> AsyncGenerator[StreamChunk, None]:
        """Stream from the first source that answers. Fallback happens only before the first
        chunk: once text was shown, a failure goes to the caller, unless the source is
        asked again (it said when, or is overloaded): then a chunk with `restart` set comes
        first, and the answer begins again."""
        if self.guard is None:
            stream = self._fallback(request, _stream_of)
        else:
            outbound = self.guard.outbound(request)
            stream = self.guard.stream(self._fallback(outbound, _stream_of))
        try:
            async for chunk in stream:
                yield chunk
        finally:
            await stream.aclose()

    async def _fallback(
        self, request: CompletionRequest, attempt: Attempt
    ) -> AsyncGenerator[StreamChunk, None]:
        """The one loop of fallback and retry that a plain call and a stream share: each
        source in order, each asked again as its provider said, the attempt's chunks passed
        on. A plain call is an attempt of one chunk that carries the whole answer, so it
        is never "shown" before it has succeeded."""
        await self.refresh()
        failures: list[tuple[str, str]] = []
        order = self.ordered_sources()
        deadline = self.clock.monotonic() + self.settings.call_deadline_s
        for state in self._candidates(failures):
            assert state.provider is not None
            fitted = self._fitted(state, request)
            tries, shown = 0, False
            while True:
                chunks = attempt(state.provider, fitted)
                try:
                    async for chunk in chunks:
                        if not shown:
                            shown = True
                            self._answered(state, order[0], failures)
                        if chunk.response is not None:
                            self._account(chunk.response, request)
                        yield chunk
                    return
                except ContextTooLong as exc:
                    self._too_long(state, exc)
                    raise
                except ProviderError as exc:
                    wait = self._retry_wait(exc, tries, deadline)
                    if wait is None:
                        self._failed(state, exc)
                        if shown:
                            raise
                        failures.append((state.name, exc.reason))
                        break
                    tries += 1
                    self._retrying(state, exc, tries, wait)
                    if shown:
                        yield StreamChunk(restart=True)
                    await self.clock.sleep(wait)
                finally:
                    await chunks.aclose()
        raise self._exhausted(failures)

    def _fitted(self, state: SourceState, request: CompletionRequest) -> CompletionRequest:
        """The request as this source may be sent it: images as text notes for a model
        that reads none (announced once per call and source)."""
        assert state.provider is not None
        if state.provider.accepts_images or not request.has_images:
            return request
        notes = images_as_notes(request)
        log.warning(
            "LLM source %s reads no images: %d image(s) sent as text notes naming them",
            state.name,
            len(notes.images),
        )
        self._emit(
            ProviderImagesAsText(
                llm_source=state.name, adapter=state.adapter, images=describe(notes.images)
            )
        )
        return notes.request

    def _account(self, response: CompletionResponse, request: CompletionRequest) -> None:
        response.cost = self.usage.record(
            response.source, response.model, request.channel, response.token_usage
        )

    # ---- budget -----------------------------------------------------------------------------

    @property
    def max_context_tokens(self) -> int:
        """The window of the source a call would try first."""
        for name in self.ordered_sources():
            state = self._states[name]
            provider = state.provider
            if provider is not None and not state.blocked:
                model = provider.source.model
                if (
                    provider.context_window_origin == "fallback"
                    and model not in self._guessed_windows
                ):
                    self._guessed_windows.add(model)
                    warn_fallback_window(model)
                return provider.max_context_tokens
        raise AllProvidersFailed([(n, self._why(n)) for n in self.ordered_sources()])

    @property
    def accepts_images(self) -> bool:
        """Whether the source a call would try first reads images (False when none can
        be tried: a caller deciding what to offer assumes the lesser model)."""
        for name in self.ordered_sources():
            state = self._states[name]
            if state.provider is not None and not state.blocked:
                return state.provider.accepts_images
        return False

    def accepts_images_of(self, name: str) -> bool:
        """Whether source `name` reads images (LookupError for one without a provider)."""
        return self.provider(name).accepts_images

    def budget(self, fixed_tokens: int = 0) -> TokenBudget:
        return compute_budget(
            self.max_context_tokens, fixed_tokens, self.settings.max_target_tokens
        )

    def _emit(self, payload: Payload) -> None:
        if self.events is not None:
            self.events.emit(payload, source="llm")
