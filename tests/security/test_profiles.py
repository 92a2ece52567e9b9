"""Plugin-named profiles: declared in plugin.json, selected per input, never guessed."""

from __future__ import annotations

import pytest

from hologram import Kernel
from hologram.plugins.manifest import ManifestError, parse_manifest
from hologram.security import SecurityRefused

MANIFEST = {
    "name": "qq",
    "version": "1.0",
    "entry": "main.py",
    "security_profiles": {
        "qq.owner": {"internal": True, "description": "the bot's owner"},
        "qq.guest": {"deny": ["files_*", "knowledge_create"], "network": False},
        "qq.operator": {"grant": ["cmd_run"], "description": "may run commands, nothing more"},
    },
}


def test_a_manifest_declares_its_profiles() -> None:
    manifest = parse_manifest(MANIFEST, "qq/plugin.json")
    owner, guest, operator = manifest.security_profiles
    assert (owner.name, owner.internal) == ("qq.owner", True)
    assert (guest.deny, guest.network) == (("files_*", "knowledge_create"), False)
    assert (operator.grant, operator.internal) == (("cmd_run",), False)


@pytest.mark.parametrize(
    ("profiles", "message"),
    [
        ({"other.guest": {}}, "named after its plugin"),
        ({"guest": {}}, "'<plugin>.<role>'"),
        ({"qq.guest": {"admin": True}}, "unknown field"),
        ({"qq.guest": {"deny": "files_*"}}, "list of strings"),
        ({"qq.guest": {"grant": "cmd_run"}}, "'grant' must be a list of strings"),
        ({"qq.guest": {"internal": "yes"}}, "true or false"),
        (["qq.guest"], "must be an object"),
    ],
)
def test_a_bad_profile_declaration_is_refused_where_it_is_read(
    profiles: object, message: str
) -> None:
    with pytest.raises(ManifestError, match=r"qq/plugin\.json") as refused:
        parse_manifest({**MANIFEST, "security_profiles": profiles}, "qq/plugin.json")
    assert message in str(refused.value)


async def test_an_undeclared_profile_is_an_error_and_a_declared_one_sets_the_rights(
    kernel: Kernel,
) -> None:
    firewall = kernel.state.security
    declared = parse_manifest(MANIFEST, "qq/plugin.json").security_profiles
    with pytest.raises(
        SecurityRefused, match=r"'qq\.admin'.*declared: qq\.guest, qq\.operator, qq\.owner"
    ):
        firewall.select_profile("qq", declared, "qq.admin")
    guest = firewall.select_profile("qq", declared, "qq.guest")
    firewall.expect_input("hello", "qq", "42", guest)
    principal = firewall.principal_for("hello", "qq", "42")
    assert principal.profile is guest and not principal.internal
    policy = firewall.policy()
    assert "denied by the deny list of profile 'qq.guest'" in policy.decide(
        "files_read", {"path": "a.txt"}, principal
    )
    assert "network" in policy.decide("notes_get", {"url": "http://example.org"}, principal)
    owner = firewall.select_profile("qq", declared, "qq.owner")
    firewall.expect_input("write it", "qq", "1", owner)
    boss = firewall.principal_for("write it", "qq", "1")
    assert boss.internal and policy.decide("files_write", {"path": "a.txt"}, boss) is None
    # the selection is used once: the same text again, unselected, is a plain outsider
    assert not firewall.principal_for("write it", "qq", "1").internal


async def test_a_profile_grants_only_the_hard_private_tools_it_names(kernel: Kernel) -> None:
    firewall = kernel.state.security
    declared = parse_manifest(MANIFEST, "qq/plugin.json").security_profiles
    policy = firewall.policy()
    guest = firewall.select_profile("qq", declared, "qq.guest")
    firewall.expect_input("run it", "qq", "7", guest)
    outsider = firewall.principal_for("run it", "qq", "7")
    assert "private to the owner" in policy.decide("cmd_run", {"command": "ls"}, outsider)
    operator = firewall.select_profile("qq", declared, "qq.operator")
    firewall.expect_input("run it", "qq", "8", operator)
    trusted = firewall.principal_for("run it", "qq", "8")
    assert not trusted.internal
    assert policy.decide("cmd_run", {"command": "ls"}, trusted) is None
    assert "private to the owner" in policy.decide("terminal_create", {}, trusted)
