"""The update module's one error family."""


class UpdateError(Exception):
    """The data dir cannot be used as it is; the message says why and what to do."""
