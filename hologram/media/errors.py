"""Why media was refused. Each maps to one HTTP status at the service's door."""

from __future__ import annotations


class MediaError(Exception):
    """Media the store refuses or cannot find; the message says which and why."""

    status = 400


class MediaTypeError(MediaError):
    """Bytes of an unaccepted or damaged type, or not of the type their sender claimed."""

    status = 415


class MediaTooLarge(MediaError):
    """More bytes, or more items in one input, than the `core.media.*` limits allow."""

    status = 413


class UnknownMedia(MediaError):
    """No media with this digest is stored."""

    status = 404


class MediaCorrupt(MediaError):
    """Stored bytes that no longer match their digest (damaged on disk)."""

    status = 500
