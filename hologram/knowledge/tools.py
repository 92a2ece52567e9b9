"""The model's tools over the knowledge base: knowledge_search, knowledge_create and
knowledge_list (which also gives the category view: subtree and counts)."""

from __future__ import annotations

from typing import Annotated

from hologram.knowledge.store import KnowledgeBase, KnowledgeError
from hologram.sdk import NOT_BLANK, Param, ToolDef

MAX_TOP = 20


Category = Annotated[str, Param("a category path, e.g. cooking/bread")]


def knowledge_tools(kb: KnowledgeBase) -> list[ToolDef]:
    async def knowledge_search(
        query: Annotated[str, Param(pattern=NOT_BLANK)],
        category: Category = "",
        top: Annotated[int, Param(ge=1, le=MAX_TOP)] = 5,
    ) -> str:
        """Search the knowledge base (reference material you were given), optionally
        within one category."""
        hits = await kb.search(query, top, category.strip().strip("/"))
        if not hits:
            return "No knowledge entry matches that."
        return "\n".join(f"- {h.name} ({h.score:.2f}): {h.snippet}" for h in hits)

    async def knowledge_create(
        name: str, content: Annotated[str, Param("markdown")], replace: bool = False
    ) -> str:
        """Add an entry to the knowledge base. The name is a path: its folders are its
        categories (cooking/bread/sourdough)."""
        entry = await kb.create(name, content, replace=replace)
        where = f" in {entry.category}" if entry.category else ""
        return f"Saved knowledge entry {entry.name!r}{where}."

    async def knowledge_list(category: Category = "") -> str:
        """List knowledge entries and categories with their counts, all or within a
        category's subtree."""
        category = category.strip().strip("/")
        names = await kb.list(category)
        counts = await kb.categories(category)
        if not names:
            return f"No entries{' in ' + category if category else ''}."
        lines = ["Categories (entries in each, subtree included):"] if counts else []
        lines += [f"  {c}: {n}" for c, n in counts.items()]
        lines.append("Entries:")
        lines += [f"  {n}" for n in names]
        return "\n".join(lines)

    return [
        ToolDef.from_function(tool, owner="knowledge", refusals=(KnowledgeError,))
        for tool in (knowledge_search, knowledge_create, knowledge_list)
    ]
