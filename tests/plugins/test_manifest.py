"""plugin.json is checked where it is read, with errors that name the fix."""

from __future__ import annotations

import pytest

from hologram.plugins import Kind, ManifestError, parse_manifest

BASE = {"name": "demo", "version": "1.0", "entry": "main.py"}


def test_an_unknown_facility_is_an_error_listing_the_real_ones() -> None:
    with pytest.raises(ManifestError) as caught:
        parse_manifest({**BASE, "requires_facilities": ["memroy"]}, "demo/plugin.json")
    message = str(caught.value)
    assert "demo/plugin.json" in message and "'memroy'" in message
    assert "memory" in message and "scheduler" in message


def test_a_withheld_capability_in_a_manifest_says_the_plugin_must_be_built_in() -> None:
    with pytest.raises(ManifestError, match=r"\['publish'\] are withheld.*must be built in"):
        parse_manifest({**BASE, "capabilities": ["tools", "publish"]}, "x")


def test_an_unknown_capability_lists_the_public_ones() -> None:
    with pytest.raises(ManifestError, match=r"unknown capability 'tool'.*tools, stages"):
        parse_manifest({**BASE, "capabilities": ["tool"]}, "x")


def test_the_entry_selects_the_loader() -> None:
    assert parse_manifest(BASE, "x").kind is Kind.SUBPROCESS
    assert parse_manifest({**BASE, "entry": "main.lua"}, "x").kind is Kind.LUA
    assert parse_manifest({**BASE, "entry": "SKILL.md"}, "x").kind is Kind.SKILL
    with pytest.raises(ManifestError, match="names no loader"):
        parse_manifest({**BASE, "entry": "plugin.bin"}, "x")


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"name": "Bad Name"}, "not allowed"),
        ({"entry": "../main.py"}, "inside the plugin's folder"),
        ({"auto_start": "yes"}, "'auto_start' must be true or false"),
        ({"colour": "red"}, "unknown field"),
        ({"version": ""}, "'version' is required"),
    ],
)
def test_bad_fields_are_refused_by_name(change: dict[str, object], fragment: str) -> None:
    with pytest.raises(ManifestError, match=fragment):
        parse_manifest({**BASE, **change}, "x")
