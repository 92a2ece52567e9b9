"""Social memory (spec: social.Social): people, their traits and who relates to whom, kept
in the same graph as everything else (a person is an entity of type "person", a trait a
key of its traits, a relationship a fact)."""

from __future__ import annotations

from typing import Annotated, Any

from hologram.memory.graph.store import GraphStore
from hologram.memory.graph.types import GraphError, Triple
from hologram.sdk import NOT_BLANK, Param, ToolDef
from hologram.sdk import Person as PersonInfo

PERSON = "person"


class Social:
    def __init__(self, graph: GraphStore) -> None:
        self.graph = graph

    async def person(self, name: str) -> PersonInfo:
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


Person = Annotated[str, Param("the person's name", pattern=NOT_BLANK)]
TraitValue = str | int | float | bool | None


def social_tools(social: Social) -> list[ToolDef]:
    async def person_query(name: Person) -> str:
        """What memory holds about a person: traits, aliases and relationships."""
        info = await social.person(name)
        lines = [f"{info['name']} ({info['type'] or 'unknown type'}, {info['mentions']} mentions)"]
        if info["aliases"]:
            lines.append("also called: " + ", ".join(info["aliases"]))
        lines += [f"{k}: {v}" for k, v in info["traits"].items()]
        lines += info["relations"]
        return "\n".join(lines)

    async def set_trait(
        name: Person,
        trait: Annotated[str, Param("what the value describes, e.g. humour", pattern=NOT_BLANK)],
        value: Annotated[TraitValue, Param("the trait's value; null removes the trait")],
    ) -> str:
        """Record a trait of a person (humour: dry). A null value removes it."""
        held = await social.set_trait(name, trait, value)
        return f"{name}: {', '.join(f'{k}={v}' for k, v in held.items()) or 'no traits'}"

    async def relate(
        person: Person,
        relation: Annotated[str, Param("e.g. friend_of, sister_of", pattern=NOT_BLANK)],
        other: Person,
    ) -> str:
        """Record how two people relate (Alice friend_of Bob)."""
        fact_id = await social.relate(person, relation, other)
        return f"Noted #{fact_id}: {person} —{relation}→ {other}."

    return [
        ToolDef.from_function(tool, owner="memory", refusals=(GraphError,))
        for tool in (person_query, set_trait, relate)
    ]
