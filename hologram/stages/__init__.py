"""The stage pipeline's host: stage handlers with per-stage write rights, and the tool table."""

from hologram.stages._view import StageView, StageWriteError
from hologram.stages.execute import ToolRunner, invoke, memory_text
from hologram.stages.host import TOOL_STAGES, StageHost, StageRun
from hologram.stages.module import StageHostModule
from hologram.stages.tools import DuplicateToolError, ToolTable, infer_owner

__all__ = [
    "TOOL_STAGES",
    "DuplicateToolError",
    "StageHost",
    "StageHostModule",
    "StageRun",
    "StageView",
    "StageWriteError",
    "ToolRunner",
    "ToolTable",
    "infer_owner",
    "invoke",
    "memory_text",
]
