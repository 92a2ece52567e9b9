"""Social memory (spec: social.Social): people, their traits and who relates to whom, kept
in the same graph as everything else (a person is an entity of type "person", a trait a
key of its traits, a relationship a fact)."""

from __future__ import annotations

from typing import Any

from hologram.memory.graph import GraphStore
from hologram.memory.graph_types import GraphError, Triple
from hologram.sdk import ToolDef, ToolError

PERSON = "person"


class Social:
    def __init__(self, graph: GraphStore) -> None:
        self.graph = graph

    async def person(self, name: str) -> dict[str, Any]:
        """A person's traits and current relationships; `UnknownEntity` if unknown."""
        entity = await self.graph.entity(name)
        facts = await self.graph.facts(entity=entity.name)
        return {
            "name": entity.name,
            "type": entity.type,
            "aliases": entity.aliases,
            "traits": entity.traits,
            "mentions": entity.mention_count,
            "relations": [f.line() for f in facts],
        }

    async def set_trait(self, name: str, trait: str, value: Any) -> dict[str, Any]:
        if not isinstance(trait, str) or not trait.strip():
            raise GraphError("a trait needs a non-empty name, e.g. 'humour'")
        return await self.graph.set_traits(name, {trait.strip(): value}, type=PERSON)

    async def relate(self, person: str, relation: str, other: str, sentence: str = "") -> int:
        report = await self.graph.commit(
            [
                Triple(
                    person, relation, other, PERSON, PERSON, sentence_text=sentence, origin="relate"
                )
            ]
        )
        return (report.added or report.confirmed)[0]


def social_tools(social: Social) -> list[ToolDef]:
    async def query(args: dict[str, Any]) -> str:
        name = args.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ToolError("person_query needs 'name': the person to look up")
        try:
            info = await social.person(name)
        except GraphError as exc:
            raise ToolError(str(exc)) from None
        lines = [f"{info['name']} ({info['type'] or 'unknown type'}, {info['mentions']} mentions)"]
        if info["aliases"]:
            lines.append("also called: " + ", ".join(info["aliases"]))
        lines += [f"{k}: {v}" for k, v in info["traits"].items()]
        lines += info["relations"]
        return "\n".join(lines)

    async def set_trait(args: dict[str, Any]) -> str:
        name, trait = args.get("name"), args.get("trait")
        if not isinstance(name, str) or not name.strip():
            raise ToolError("set_trait needs 'name': the person")
        if not isinstance(trait, str) or not trait.strip():
            raise ToolError("set_trait needs 'trait': what the value describes, e.g. 'humour'")
        if "value" not in args:
            raise ToolError("set_trait needs 'value' (null removes the trait)")
        value = args["value"]
        if value is not None and not isinstance(value, str | int | float | bool):
            raise ToolError("'value' must be a string, number, boolean or null")
        try:
            held = await social.set_trait(name, trait, value)
        except GraphError as exc:
            raise ToolError(str(exc)) from None
        return f"{name}: {', '.join(f'{k}={v}' for k, v in held.items()) or 'no traits'}"

    async def relate(args: dict[str, Any]) -> str:
        fields = {}
        for key in ("person", "relation", "other"):
            value = args.get(key)
            if not isinstance(value, str) or not value.strip():
                raise ToolError(f"relate needs {key!r} as a non-empty string")
            fields[key] = value
        try:
            fact_id = await social.relate(fields["person"], fields["relation"], fields["other"])
        except GraphError as exc:
            raise ToolError(str(exc)) from None
        return f"Noted #{fact_id}: {fields['person']} —{fields['relation']}→ {fields['other']}."

    name = {"type": "string", "description": "the person's name"}
    return [
        ToolDef(
            "person_query",
            "What memory holds about a person: traits, aliases and relationships.",
            {"type": "object", "properties": {"name": name}, "required": ["name"]},
            query,
            owner="memory",
        ),
        ToolDef(
            "set_trait",
            "Record a trait of a person (humour: dry). A null value removes it.",
            {
                "type": "object",
                "properties": {
                    "name": name,
                    "trait": {"type": "string"},
                    "value": {"type": ["string", "number", "boolean", "null"]},
                },
                "required": ["name", "trait", "value"],
            },
            set_trait,
            owner="memory",
        ),
        ToolDef(
            "relate",
            "Record how two people relate (Alice friend_of Bob).",
            {
                "type": "object",
                "properties": {"person": name, "relation": {"type": "string"}, "other": name},
                "required": ["person", "relation", "other"],
            },
            relate,
            owner="memory",
        ),
    ]
