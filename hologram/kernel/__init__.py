"""Kernel assembly: modules declare what they need and provide; the graph decides the order.

This package knows no concrete module. It plans and boots whatever list it is given, on
whatever state dataclass it is given.

Names load with the submodule that defines them, on first use: a plugin process needs the
task group, not the planner (networkx).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_LAZY = {
    "hologram.kernel.boot": ("Assembly", "BootStep", "Observer", "Progress", "Status"),
    "hologram.kernel.clock": ("ManualClock", "SystemClock"),
    "hologram.kernel.datadir": ("DataDirLock", "DataDirLockedError", "resolve_data_dir"),
    "hologram.kernel.depgraph": ("REGENERATE", "load_plan", "stale_reason", "write_depgraph"),
    "hologram.kernel.errors": (
        "AssemblyError",
        "BootError",
        "DependencyCycleError",
        "DepgraphError",
        "DuplicateProviderError",
        "FacilityAccessError",
        "MissingFacilityError",
        "PlanError",
    ),
    "hologram.kernel.logs": ("KernelLog", "current_kernel"),
    "hologram.kernel.module": ("Module", "field_name", "optional_of"),
    "hologram.kernel.planner": ("Plan", "plan", "plan_from_layers"),
    "hologram.kernel.tasks": (
        "KernelTasks",
        "Once",
        "Ready",
        "ServiceFailed",
        "TaskScope",
        "first_completed",
    ),
}
_WHERE = {name: module for module, names in _LAZY.items() for name in names}
_RENAMED = {"write_depgraph": "write"}

__all__ = [
    "REGENERATE",
    "Assembly",
    "AssemblyError",
    "BootError",
    "BootStep",
    "DataDirLock",
    "DataDirLockedError",
    "DependencyCycleError",
    "DepgraphError",
    "DuplicateProviderError",
    "FacilityAccessError",
    "KernelLog",
    "KernelTasks",
    "ManualClock",
    "MissingFacilityError",
    "Module",
    "Observer",
    "Once",
    "Plan",
    "PlanError",
    "Progress",
    "Ready",
    "ServiceFailed",
    "Status",
    "SystemClock",
    "TaskScope",
    "current_kernel",
    "field_name",
    "first_completed",
    "load_plan",
    "optional_of",
    "plan",
    "plan_from_layers",
    "resolve_data_dir",
    "stale_reason",
    "write_depgraph",
]

if TYPE_CHECKING:
    from hologram.kernel.boot import Assembly, BootStep, Observer, Progress, Status
    from hologram.kernel.clock import ManualClock, SystemClock
    from hologram.kernel.datadir import DataDirLock, DataDirLockedError, resolve_data_dir
    from hologram.kernel.depgraph import REGENERATE, load_plan, stale_reason
    from hologram.kernel.depgraph import write as write_depgraph
    from hologram.kernel.errors import (
        AssemblyError,
        BootError,
        DependencyCycleError,
        DepgraphError,
        DuplicateProviderError,
        FacilityAccessError,
        MissingFacilityError,
        PlanError,
    )
    from hologram.kernel.logs import KernelLog, current_kernel
    from hologram.kernel.module import Module, field_name, optional_of
    from hologram.kernel.planner import Plan, plan, plan_from_layers
    from hologram.kernel.tasks import (
        KernelTasks,
        Once,
        Ready,
        ServiceFailed,
        TaskScope,
        first_completed,
    )


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'hologram.kernel' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), _RENAMED.get(name, name))
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
