"""Images for a model that cannot read them: each becomes a text note naming it.

A source whose model takes no images (`accepts_images` false: its adapter's declaration or
its own setting) is sent the conversation with every image replaced by a note: the media's
type, size and short digest, and, for media in the store, the `seemedia` call that shows it
by digest. The request goes through instead of failing, and a later source in the fallback
order that does read images still gets the images themselves: the notes are made per
source, from the request as the caller wrote it.
"""

from __future__ import annotations

import dataclasses

from hologram.llm.messages import ChatMessage, CompletionRequest, ImageBlock
from hologram.sdk import MediaRef


@dataclasses.dataclass(frozen=True, slots=True)
class ImageNotes:
    """A request with its images turned into notes, and the images that were."""

    request: CompletionRequest
    images: list[ImageBlock]


def image_note(image: ImageBlock) -> str:
    """What a model without vision is told in place of `image`."""
    ref = _stored(image)
    if ref is not None:
        return (
            f"{ref.label()} (not shown: this model reads no images; the seemedia tool "
            f'takes digest "{image.digest}")'
        )
    where = f" at {image.url}" if image.url else ""
    named = f" {image.name!r}" if image.name else ""
    size = f", {image.size} bytes" if image.size else ""
    return f"[{image.media_type}{named}{size}{where}] (not shown: this model reads no images)"


def _stored(image: ImageBlock) -> MediaRef | None:
    if not image.digest:
        return None
    try:
        return MediaRef(image.digest, image.media_type, image.size, name=image.name)
    except ValueError:  # not a store digest: named as an image without one
        return None


def _as_text(message: ChatMessage) -> ChatMessage:
    assert not isinstance(message.content, str)
    texts = [
        image_note(block) if isinstance(block, ImageBlock) else block.text
        for block in message.content
    ]
    # Only text is left: one string, so every format (a tool message's text above all)
    # keeps the pieces apart.
    return dataclasses.replace(message, content="\n".join(t for t in texts if t))


def images_as_notes(request: CompletionRequest) -> ImageNotes:
    """`request` with every image a note; the caller's request is left as it is."""
    images = [image for message in request.messages for image in message.images]
    if not images:
        return ImageNotes(request, [])
    messages = [_as_text(m) if m.images else m for m in request.messages]
    return ImageNotes(dataclasses.replace(request, messages=messages), images)


def describe(images: list[ImageBlock]) -> list[dict[str, object]]:
    """The images a note replaced, for the event that says so (never their bytes)."""
    return [
        {"digest": i.digest, "media_type": i.media_type, "size": i.size, "name": i.name}
        for i in images
    ]


__all__ = ["ImageNotes", "describe", "image_note", "images_as_notes"]
