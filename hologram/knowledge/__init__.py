"""The knowledge base: reference material the agent is given (not what it remembers), in
`<data>/knowledge/<category>/…/<name>/content.md`, with its own bigram TF-IDF index."""

from hologram.knowledge.index import BigramTfidf, terms
from hologram.knowledge.module import KnowledgeModule
from hologram.knowledge.store import Entry, Hit, KnowledgeBase, KnowledgeError, check_name
from hologram.knowledge.tools import knowledge_tools

__all__ = [
    "BigramTfidf",
    "Entry",
    "Hit",
    "KnowledgeBase",
    "KnowledgeError",
    "KnowledgeModule",
    "check_name",
    "knowledge_tools",
    "terms",
]
