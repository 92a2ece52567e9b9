"""`%hologram upload`: pick images, type what to say, send them as one input.

Plain ipywidgets (a FileUpload, a text box, a button): the picked files come to the kernel
as bytes with the browser's claimed type, which the media store checks against the bytes,
as it does for every other door. A refusal (a damaged or lying image, over the
`core.media.*` limits) is shown under the button; nothing is journaled then.
"""

from __future__ import annotations

import asyncio
from html import escape
from typing import Any

import ipywidgets as widgets

from hologram.facade import Kernel
from hologram.media import MediaError, Upload
from hologram.notebook.front import StaticFallback
from hologram.sdk import Priority

THUMB_PX = 64


class UploadWidget(StaticFallback, widgets.VBox):
    """The picker, the text, the send button, thumbnails of what is picked and a status
    line. `sending` is the task of the last send (a test or a cell may await it)."""

    def __init__(self, kernel: Kernel, channel: str = "notebook") -> None:
        self.kernel = kernel
        self.channel = channel
        self.picker = widgets.FileUpload(accept="image/*", multiple=True, description="Images")
        self.text = widgets.Text(placeholder="what to say with the images")
        self.button = widgets.Button(description="Send", button_style="primary")
        self.thumbs = widgets.HBox()
        self.status = widgets.Label("")
        self.sending: asyncio.Task[str] | None = None
        super().__init__(
            [widgets.HBox([self.picker, self.text, self.button]), self.thumbs, self.status]
        )
        self.picker.observe(self._picked, names="value")
        self.button.on_click(self._send)

    def fallback_html(self) -> str:
        # A form needs a live front end; a saved page says what it was and how else to send.
        status = f" {escape(self.status.value)}" if self.status.value else ""
        return (
            "<div class='hologram-upload'>An image upload form (it needs a running Jupyter "
            f"front end; `%hologram say --image PATH TEXT` sends images too).{status}</div>"
        )

    def uploads(self) -> list[Upload]:
        return [
            Upload(bytes(f["content"]), str(f.get("type", "")), str(f.get("name", "")))
            for f in self.picker.value
        ]

    def _picked(self, change: dict[str, Any]) -> None:
        self.thumbs.children = [
            widgets.Image(value=u.data, width=THUMB_PX, layout={"max_height": f"{THUMB_PX}px"})
            for u in self.uploads()
        ]

    def _send(self, _button: object = None) -> None:
        text, uploads = self.text.value.strip(), self.uploads()
        if not text:
            self.status.value = "type what to say with the images first"
            return
        self.button.disabled = True
        self.status.value = f"sending with {len(uploads)} image(s)…"
        self.sending = self.kernel.spawn(self._say(text, uploads), name="upload-say")

    async def _say(self, text: str, uploads: list[Upload]) -> str:
        try:
            ticket = await self.kernel.inject(
                text, self.channel, level=Priority.QUEUED, media=uploads
            )
        except MediaError as exc:
            self.status.value = f"refused: {exc}"
            raise
        finally:
            self.button.disabled = False
        self.text.value = ""
        self.picker.value = ()
        self.status.value = f"input #{ticket.id} sent with {len(uploads)} image(s)"
        try:
            reply = (await ticket).reply
        except BaseException as exc:
            self.status.value = f"input #{ticket.id}: no reply: {type(exc).__name__}: {exc}"
            raise
        self.status.value = f"input #{ticket.id}: {reply}"
        return reply
