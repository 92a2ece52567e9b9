"""The kernel log's filter: a record is rendered and masked before it is written, so a
secret in a message, in its arguments or in a traceback reaches the file as its alias."""

from __future__ import annotations

import logging

from hologram.security.credentials import CredentialGate


class SecretLogFilter(logging.Filter):
    def __init__(self, gate: CredentialGate) -> None:
        super().__init__("")
        self._gate = gate

    def filter(self, record: logging.LogRecord) -> bool:
        gate = self._gate
        if not gate.longest:
            return True
        message = record.getMessage()
        masked = gate.mask(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = gate.mask(record.exc_text)
            # The formatter would render exc_info again if it were kept; exc_text is used
            # when set, so the masked text is what is written.
        if record.stack_info:
            record.stack_info = gate.mask(record.stack_info)
        return True
