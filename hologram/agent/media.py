"""Media in a turn's requests (spec: InjectInputMedia, SetToolBlocks, seemedia).

Inputs, tool results and memory carry `MediaRef`s only; the bytes are read from the media
store when a request is built, once per turn for each digest. An image becomes an image
block; other media (a PDF, a text file) is named by its label, and a short text file is
inlined, since every model reads text.

When `seemedia` is offered (spec: buildToolDefs offers the media tools while media is
pending): in every round of a turn that has media in view, namely the input's own media, a
media returned by a tool earlier in the turn, media of a turn still in the context window,
or media of a memory recalled for this input (its sentence names it by label). A turn with
none of these is not offered it, so the tool list of a text-only conversation is unchanged.
A digest is taken whole or as a prefix of at least `MIN_PREFIX` hex digits (labels show
12); an unknown or ambiguous one is an error result naming it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Annotated

from hologram.llm import ChatMessage, ContentBlock, ImageBlock, TextBlock
from hologram.media import MediaError, MediaStore
from hologram.sdk import MediaRef, Param, ToolDef, ToolError, ToolOutput, ToolResult

SEEMEDIA = "seemedia"
INLINE_TEXT_CHARS = 4000
"""A text/plain media up to this many characters is shown whole; a longer one by its label
and first part (the model can ask for the rest with seemedia)."""
MIN_PREFIX = 8
"""The shortest digest prefix seemedia takes (labels show 12 hex digits)."""
WINDOW_NOTE = "Media from earlier in this conversation (still in the context window):"


class MediaParts:
    """One turn's view of the media store: content blocks for references, the bytes of each
    digest read and encoded once however many rounds show it."""

    def __init__(self, store: MediaStore | None) -> None:
        self.store = store
        self._images: dict[str, ImageBlock] = {}

    def blocks(self, refs: Iterable[MediaRef]) -> list[ContentBlock]:
        out: list[ContentBlock] = []
        for ref in refs:
            out += self.block(ref)
        return out

    def block(self, ref: MediaRef) -> list[ContentBlock]:
        if self.store is None:
            return [TextBlock(f"{ref.label()} (not available: this kernel has no media store)")]
        try:
            if ref.is_image:
                return [self.image(ref)]
            if ref.mime == "text/plain":
                return [TextBlock(self.inline_text(ref))]
        except MediaError as exc:
            # Media gone or damaged since it was stored: the model is told, the turn goes on.
            return [TextBlock(f"{ref.label()} (cannot be shown: {exc})")]
        return [TextBlock(ref.label())]

    def image(self, ref: MediaRef) -> ImageBlock:
        if ref.digest not in self._images:
            assert self.store is not None
            self._images[ref.digest] = ImageBlock.from_media(ref, self.store.get(ref.digest))
        cached = self._images[ref.digest]
        # The same bytes may be named differently by the input and a later seemedia.
        return cached if cached.name == ref.name else dataclasses.replace(cached, name=ref.name)

    def inline_text(self, ref: MediaRef) -> str:
        assert self.store is not None
        text = self.store.get(ref.digest).decode("utf-8", "replace")
        if len(text) <= INLINE_TEXT_CHARS:
            return f"{ref.label()}\n{text}"
        return f"{ref.label()} (first {INLINE_TEXT_CHARS} characters)\n{text[:INLINE_TEXT_CHARS]}"

    def user_message(self, text: str, refs: Sequence[MediaRef]) -> ChatMessage:
        """The input as the model sees it: its text first, then its media."""
        if not refs:
            return ChatMessage.user(text)
        return ChatMessage.user([TextBlock(text), *self.blocks(refs)])

    def window_message(self, refs: Sequence[MediaRef]) -> ChatMessage | None:
        """Media of earlier turns still in the window, shown again (None when there is none)."""
        if not refs:
            return None
        return ChatMessage.user([TextBlock(WINDOW_NOTE), *self.blocks(refs)])

    def tool_message(self, result: ToolResult) -> ChatMessage:
        """A tool's answer; with images, its text first and then the images. A tool's other
        media is named by label in its text already (a tool message holds only images)."""
        images = [b for b in self.blocks(result.media) if isinstance(b, ImageBlock)]
        return ChatMessage.tool(result, images=images)


def find_media(store: MediaStore, digest: str) -> MediaRef:
    """The stored media named by `digest` or by a unique prefix of it (what labels show)."""
    wanted = digest.strip().lower().removeprefix("sha256:")
    if len(wanted) == 64:
        try:
            return store.ref(wanted)
        except MediaError:
            raise ToolError(f"no stored media has digest {digest!r}") from None
    if len(wanted) < MIN_PREFIX or any(c not in "0123456789abcdef" for c in wanted):
        raise ToolError(
            f"{digest!r} is not a media digest: give the 64 hex digits, or at least the first "
            f"{MIN_PREFIX} (as in a label's sha256:…)"
        )
    matches = [d for d in store.digests() if d.startswith(wanted)]
    if not matches:
        raise ToolError(f"no stored media has digest {digest!r}")
    if len(matches) > 1:
        raise ToolError(f"{digest!r} names {len(matches)} media; give more of the digest")
    return store.ref(matches[0])


def seemedia_tool(store: MediaStore) -> ToolDef:
    def seemedia(
        digest: Annotated[str, Param("the media's sha256 digest, or its first 12 digits")],
    ) -> ToolOutput:
        """Look at a stored image or file by its digest: one named in this conversation, in
        recalled memory or in a knowledge entry (shown as [type … sha256:digest]). You see
        it with this call's result."""
        ref = find_media(store, digest)
        return ToolOutput("The media you asked to see:", (ref,))

    return ToolDef.from_function(seemedia, name=SEEMEDIA, owner="kernel", no_memory=True)
