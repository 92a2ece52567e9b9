"""The model's tools over the knowledge base: knowledge_search, knowledge_create and
knowledge_list (which also gives the category view: subtree and counts)."""

from __future__ import annotations

from typing import Any

from hologram.knowledge.store import KnowledgeBase, KnowledgeError
from hologram.sdk import ToolDef, ToolError

MAX_TOP = 20


def _category(args: dict[str, Any]) -> str:
    category = args.get("category", "")
    if not isinstance(category, str):
        raise ToolError("'category' must be a string like 'cooking/bread'")
    return category.strip().strip("/")


def knowledge_tools(kb: KnowledgeBase) -> list[ToolDef]:
    async def search(args: dict[str, Any]) -> str:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ToolError("knowledge_search needs 'query': the words to look for")
        top = args.get("top", 5)
        if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= MAX_TOP:
            raise ToolError(f"'top' must be an integer from 1 to {MAX_TOP}")
        try:
            hits = await kb.search(query, top, _category(args))
        except KnowledgeError as exc:
            raise ToolError(str(exc)) from None
        if not hits:
            return "No knowledge entry matches that."
        return "\n".join(f"- {h.name} ({h.score:.2f}): {h.snippet}" for h in hits)

    async def create(args: dict[str, Any]) -> str:
        name, content = args.get("name"), args.get("content")
        if not isinstance(content, str):
            raise ToolError("knowledge_create needs 'content': the entry's text (markdown)")
        replace = args.get("replace", False)
        if not isinstance(replace, bool):
            raise ToolError("'replace' must be true or false")
        try:
            entry = await kb.create(name, content, replace=replace)  # type: ignore[arg-type]
        except KnowledgeError as exc:
            raise ToolError(str(exc)) from None
        where = f" in {entry.category}" if entry.category else ""
        return f"Saved knowledge entry {entry.name!r}{where}."

    async def listing(args: dict[str, Any]) -> str:
        try:
            category = _category(args)
            names = await kb.list(category)
            counts = await kb.categories(category)
        except KnowledgeError as exc:
            raise ToolError(str(exc)) from None
        if not names:
            return f"No entries{' in ' + category if category else ''}."
        lines = ["Categories (entries in each, subtree included):"] if counts else []
        lines += [f"  {c}: {n}" for c, n in counts.items()]
        lines.append("Entries:")
        lines += [f"  {n}" for n in names]
        return "\n".join(lines)

    category = {"type": "string", "description": "a category path, e.g. cooking/bread"}
    return [
        ToolDef(
            "knowledge_search",
            "Search the knowledge base (reference material you were given), optionally "
            "within one category.",
            {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "category": category,
                    "top": {"type": "integer", "minimum": 1, "maximum": MAX_TOP, "default": 5},
                },
                "required": ["query"],
            },
            search,
            owner="knowledge",
        ),
        ToolDef(
            "knowledge_create",
            "Add an entry to the knowledge base. The name is a path: its folders are its "
            "categories (cooking/bread/sourdough).",
            {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "content": {"type": "string", "description": "markdown"},
                    "replace": {"type": "boolean", "default": False},
                },
                "required": ["name", "content"],
            },
            create,
            owner="knowledge",
        ),
        ToolDef(
            "knowledge_list",
            "List knowledge entries and categories with their counts, all or within a "
            "category's subtree.",
            {"type": "object", "properties": {"category": category}},
            listing,
            owner="knowledge",
        ),
    ]
