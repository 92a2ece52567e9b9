"""The headings of the system prompt's sections that a model reads back.

The prompt builder writes them and the offline scripted model, which has only the request
to go on, finds what the kernel recalled for the turn under them: one spelling for both.
"""

from __future__ import annotations

from enum import StrEnum


class PromptSection(StrEnum):
    MEMORY = "## What you remember"
    """What recall found for the turn in the stored tiers, best first."""
    KNOWLEDGE = "## Knowledge"
    TIMELINE = "## Recent conversation"
    """The context window kept for the turn, oldest first."""
