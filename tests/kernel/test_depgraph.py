"""The layer plan as a shipped, verified build artifact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hologram import Kernel
from hologram._group0 import GIVEN
from hologram.facade import shipped_depgraph
from hologram.kernel import BootError, DepgraphError, load_plan, stale_reason, write_depgraph
from hologram.kernel.depgraph import render
from hologram.kernel.planner import plan_from_layers
from hologram.modules import kernel_modules
from tests.kernel.helpers import Mod

REGENERATE = "python -m hologram depgraph --write"


def test_shipped_layer_plan_matches_the_module_list() -> None:
    assert stale_reason(shipped_depgraph(), kernel_modules(), GIVEN) is None


def _copy_of_shipped(tmp_path: Path) -> Path:
    copy = tmp_path / "depgraph.json"
    copy.write_text(shipped_depgraph().read_text())
    return copy


async def test_corrupt_layer_plan_fails_boot_naming_the_regenerate_command(
    tmp_path: Path, data_dir: Path
) -> None:
    artifact = _copy_of_shipped(tmp_path)
    artifact.write_text(artifact.read_text()[:40])
    kernel = Kernel(data_dir, depgraph=artifact)
    with pytest.raises(DepgraphError) as caught:
        await kernel.start()
    assert "corrupt" in str(caught.value) and REGENERATE in str(caught.value)
    # Nothing was opened, so the data dir is free for the next kernel.
    async with Kernel(data_dir):
        pass


async def test_hand_edited_layer_plan_is_refused_by_its_digest(
    tmp_path: Path, data_dir: Path
) -> None:
    artifact = _copy_of_shipped(tmp_path)
    document = json.loads(artifact.read_text())
    document["layers"] = [list(reversed(layer)) for layer in document["layers"]] + [[]]
    artifact.write_text(json.dumps(document))
    with pytest.raises(DepgraphError, match="digest does not match"):
        await Kernel(data_dir, depgraph=artifact).start()


async def test_layer_plan_of_another_graph_is_stale(tmp_path: Path, data_dir: Path) -> None:
    artifact = tmp_path / "depgraph.json"
    write_depgraph(artifact, [Mod("other", requires=("config",), provides=("events",))], GIVEN)
    with pytest.raises(DepgraphError) as caught:
        await Kernel(data_dir, depgraph=artifact).start()
    assert "another module graph" in str(caught.value) and REGENERATE in str(caught.value)


def test_missing_layer_plan_says_how_to_create_it(tmp_path: Path) -> None:
    with pytest.raises(DepgraphError, match="missing; create it with `python -m hologram"):
        load_plan(tmp_path / "nope.json", kernel_modules(), GIVEN)


async def test_intact_plan_in_a_wrong_order_is_still_caught_at_boot(tmp_path: Path) -> None:
    from hologram.kernel import Assembly
    from tests.kernel.helpers import state_for

    modules = [Mod("base", provides=("base",)), Mod("top", requires=("base",), provides=("top",))]
    artifact = tmp_path / "depgraph.json"
    artifact.write_text(json.dumps(render(plan_from_layers(modules, [["top"], ["base"]]))))
    with pytest.raises(BootError, match="not ready"):
        await Assembly(load_plan(artifact, modules, ()), state_for("base", "top")).boot()
