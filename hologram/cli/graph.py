"""`graph` and `depgraph`: the module graph of the real module set, and its shipped plan."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from hologram._group0 import GIVEN, group0
from hologram.facade import shipped_depgraph
from hologram.kernel import plan, stale_reason, write_depgraph
from hologram.modules import kernel_modules


def print_graph(as_json: bool) -> int:
    resolved = plan(kernel_modules(), GIVEN)
    steps = [step.name for step in group0()]
    if as_json:
        document: dict[str, Any] = {
            "group0": {"steps": steps, "provides": sorted(GIVEN)},
            "layers": resolved.layer_names(),
            "modules": {
                m.name: {
                    "layer": resolved.layer_of(m.name),
                    "requires": sorted(m.requires),
                    "provides": sorted(m.provides),
                }
                for m in resolved.modules
            },
            "edges": [list(edge) for edge in resolved.edges()],
        }
        print(json.dumps(document, indent=2))
    else:
        print(f"group 0  {', '.join(steps)}")
        for line in resolved.topology():
            print(line)
    return 0


def depgraph(write: bool, explicit: Path | None) -> int:
    path = explicit or shipped_depgraph()
    if write:
        artifact = write_depgraph(path, kernel_modules(), GIVEN)
        print(
            f"wrote {path} ({len(artifact['layers'])} layers, graph {artifact['graph_hash'][:12]})"
        )
        return 0
    reason = stale_reason(path, kernel_modules(), GIVEN)
    if reason is not None:
        print(f"stale: {reason}", file=sys.stderr)
        return 1
    print(f"{path} is current")
    return 0
