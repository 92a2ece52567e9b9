"""Kernel assembly: modules declare what they need and provide; the graph decides the order.

This package knows no concrete module. It plans and boots whatever list it is given, on
whatever state dataclass it is given.
"""

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
from hologram.kernel.plan import Plan, plan, plan_from_layers

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
    "ManualClock",
    "MissingFacilityError",
    "Module",
    "Observer",
    "Plan",
    "PlanError",
    "Progress",
    "Status",
    "SystemClock",
    "current_kernel",
    "field_name",
    "load_plan",
    "optional_of",
    "plan",
    "plan_from_layers",
    "resolve_data_dir",
    "stale_reason",
    "write_depgraph",
]
