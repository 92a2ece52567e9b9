"""Each kernel module declares the state its init reads (a Protocol of its package), and the
kernel's state has every field those declarations name. The type checker holds the same rule
where `hologram/modules.py` builds the list; this holds it at run time too."""

from __future__ import annotations

import dataclasses
from typing import get_type_hints

import pytest

from hologram.kernel import AssemblyError, required
from hologram.modules import kernel_modules
from hologram.sdk import Facility
from hologram.state import KernelState


def _members(protocol: type) -> set[str]:
    names: set[str] = set()
    for cls in protocol.__mro__:
        if cls is object or not getattr(cls, "_is_protocol", False):
            continue
        names |= set(getattr(cls, "__annotations__", {}))
        names |= {name for name, value in vars(cls).items() if isinstance(value, property)}
    return names - {"_is_protocol"}


def test_every_module_declares_the_state_it_reads_as_a_protocol() -> None:
    for module in kernel_modules():
        state = get_type_hints(type(module).init)["state"]
        assert getattr(state, "_is_protocol", False), (
            f"module {module.name!r}: init(state) takes {state!r}, not a Protocol of the "
            "fields it reads"
        )


def test_kernel_state_has_every_field_a_module_reads() -> None:
    fields = {f.name for f in dataclasses.fields(KernelState)}
    for module in kernel_modules():
        state = get_type_hints(type(module).init)["state"]
        assert _members(state), f"module {module.name!r} declares an empty state"
        assert _members(state) <= fields, (module.name, sorted(_members(state) - fields))


def test_a_required_facility_left_unset_names_the_facility() -> None:
    with pytest.raises(AssemblyError, match="facility 'stagehost' is required"):
        required(None, Facility.STAGE_HOST)
    assert required("x", Facility.CONFIG) == "x"
