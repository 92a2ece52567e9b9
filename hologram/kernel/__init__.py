"""Kernel assembly: modules declare what they need and provide; the graph decides the order.

This package knows no concrete module. It plans and boots whatever list it is given, on
whatever state dataclass it is given.

Names load with the submodule that defines them, on first use: a plugin process needs the
task group, not the planner (networkx).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hologram.kernel.faces import lazy_face

_LAZY = {
    "hologram.kernel.boot": ("Assembly", "BootStep", "Observer", "Progress", "Status"),
    "hologram.kernel.clock": ("ManualClock", "SystemClock"),
    "hologram.kernel.commands": ("Commands", "Run", "add_actions", "data_option", "json_option"),
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
    "hologram.kernel.faces": ("lazy_face",),
    "hologram.kernel.files": ("fsync_dir", "write_atomic"),
    "hologram.kernel.logs": ("KernelLog", "current_kernel"),
    "hologram.kernel.module": ("Module", "field_name", "optional_of", "required"),
    "hologram.kernel.planner": ("Plan", "plan", "plan_from_layers"),
    "hologram.kernel.schema": (
        "SchemaTooNew",
        "apply_step",
        "migrate_sqlite",
        "statements",
        "user_version",
    ),
    "hologram.kernel.sqlite": ("connect_sqlite",),
    "hologram.kernel.tasks": (
        "KernelTasks",
        "Once",
        "Ready",
        "ServiceFailed",
        "TaskScope",
        "first_completed",
    ),
}

__getattr__ = lazy_face(__name__, _LAZY)

__all__ = [
    "REGENERATE",
    "Assembly",
    "AssemblyError",
    "BootError",
    "BootStep",
    "Commands",
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
    "Run",
    "SchemaTooNew",
    "ServiceFailed",
    "Status",
    "SystemClock",
    "TaskScope",
    "add_actions",
    "apply_step",
    "connect_sqlite",
    "current_kernel",
    "data_option",
    "field_name",
    "first_completed",
    "fsync_dir",
    "json_option",
    "lazy_face",
    "load_plan",
    "migrate_sqlite",
    "optional_of",
    "plan",
    "plan_from_layers",
    "required",
    "resolve_data_dir",
    "stale_reason",
    "statements",
    "user_version",
    "write_atomic",
    "write_depgraph",
]

if TYPE_CHECKING:
    from hologram.kernel.boot import Assembly, BootStep, Observer, Progress, Status
    from hologram.kernel.clock import ManualClock, SystemClock
    from hologram.kernel.commands import Commands, Run, add_actions, data_option, json_option
    from hologram.kernel.datadir import DataDirLock, DataDirLockedError, resolve_data_dir
    from hologram.kernel.depgraph import REGENERATE, load_plan, stale_reason, write_depgraph
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
    from hologram.kernel.faces import lazy_face
    from hologram.kernel.files import fsync_dir, write_atomic
    from hologram.kernel.logs import KernelLog, current_kernel
    from hologram.kernel.module import Module, field_name, optional_of, required
    from hologram.kernel.planner import Plan, plan, plan_from_layers
    from hologram.kernel.schema import (
        SchemaTooNew,
        apply_step,
        migrate_sqlite,
        statements,
        user_version,
    )
    from hologram.kernel.sqlite import connect_sqlite
    from hologram.kernel.tasks import (
        KernelTasks,
        Once,
        Ready,
        ServiceFailed,
        TaskScope,
        first_completed,
    )
