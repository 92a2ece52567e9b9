"""The layer plan as a build artifact (spec 000: depgraph.bin and its EmbeddedGraphHash).

The plan of the real module set is computed once, by `python -m hologram depgraph --write`,
and shipped inside the package. Boot checks that the graph it is about to run hashes to what
the artifact was made from, and that the artifact itself is intact, before trusting its order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hologram.kernel.errors import DepgraphError
from hologram.kernel.module import Module, optional_of
from hologram.kernel.planner import Plan, plan, plan_from_layers

FORMAT = 1
REGENERATE = "python -m hologram depgraph --write"


def _digest(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def canonical_graph(modules: Iterable[Module[Any]], given: Iterable[str]) -> dict[str, Any]:
    """The graph with everything that does not change its meaning taken out (order, dupes)."""
    return {
        "given": sorted(set(given)),
        "modules": sorted(
            (
                {
                    "name": m.name,
                    "requires": sorted(set(m.requires)),
                    "provides": sorted(set(m.provides)),
                    **({"optional": sorted(set(optional_of(m)))} if optional_of(m) else {}),
                }
                for m in modules
            ),
            key=lambda entry: entry["name"],
        ),
    }


def graph_hash(modules: Iterable[Module[Any]], given: Iterable[str]) -> str:
    return _digest(canonical_graph(modules, given))


def render(resolved: Plan) -> dict[str, Any]:
    """The artifact for a plan: the graph's hash, the layers, and a digest over both."""
    body = {
        "format": FORMAT,
        "graph_hash": graph_hash(resolved.modules, resolved.given),
        "given": sorted(resolved.given),
        "layers": resolved.layer_names(),
    }
    return {**body, "digest": _digest(body)}


def write_depgraph(
    path: Path, modules: Iterable[Module[Any]], given: Iterable[str]
) -> dict[str, Any]:
    artifact = render(plan(modules, given))
    path.write_text(json.dumps(artifact, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return artifact


def _load(path: Path) -> dict[str, Any]:
    try:
        artifact = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DepgraphError(
            f"the layer plan {path} is missing; create it with `{REGENERATE}`"
        ) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DepgraphError(
            f"the layer plan {path} is corrupt ({exc}); regenerate it with `{REGENERATE}`"
        ) from exc
    required = {"format", "graph_hash", "given", "layers", "digest"}
    if not isinstance(artifact, dict) or not required <= artifact.keys():
        raise DepgraphError(
            f"the layer plan {path} is corrupt (expected the keys {sorted(required)}); "
            f"regenerate it with `{REGENERATE}`"
        )
    body = {k: v for k, v in artifact.items() if k != "digest"}
    if _digest(body) != artifact["digest"]:
        raise DepgraphError(
            f"the layer plan {path} is corrupt (its digest does not match its content); "
            f"regenerate it with `{REGENERATE}`"
        )
    if artifact["format"] != FORMAT:
        raise DepgraphError(
            f"the layer plan {path} has format {artifact['format']}, this kernel reads {FORMAT}; "
            f"regenerate it with `{REGENERATE}`"
        )
    return artifact


def stale_reason(path: Path, modules: Iterable[Module[Any]], given: Iterable[str]) -> str | None:
    """Why the artifact cannot be used for this module set, or None when it is current."""
    modules = list(modules)
    try:
        artifact = _load(path)
    except DepgraphError as exc:
        return str(exc)
    if artifact["graph_hash"] != graph_hash(modules, given):
        return (
            f"the layer plan {path} was made from another module graph than the kernel's "
            f"(hash {artifact['graph_hash'][:12]} vs {graph_hash(modules, given)[:12]}); "
            f"regenerate it with `{REGENERATE}`"
        )
    return None


def load_plan(path: Path, modules: Iterable[Module[Any]], given: Iterable[str]) -> Plan:
    """The shipped plan for these modules, or a `DepgraphError` naming the regenerate command."""
    modules = list(modules)
    given = list(given)
    reason = stale_reason(path, modules, given)
    if reason is not None:
        raise DepgraphError(reason)
    return plan_from_layers(modules, _load(path)["layers"], given)
