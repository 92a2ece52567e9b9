"""The kernel's health (spec 000: healthcheck, "which plugins stay built-in"): what a
24-hour companion checks about itself, because nobody restarts it by hand.

A report is a list of checks, each passing or failing with a sentence that names the cause:

- `selftest`: a virtual kernel on a temporary data dir, its model the offline scripted one,
  runs one turn end to end (every module boots, a turn goes through the stages and out);
- `kernel`: the kernel checked is ready;
- `llm:<source>`: each model source answers a cheap request that spends no tokens (the
  models list of its base URL; any HTTP answer means it is reachable), the offline model
  is local and passes;
- `plugin:<name>`: each plugin that should run does (crashed or failed plugins fail, with
  their last error);
- `disk`: the data dir's disk has `core.health.min_free_bytes` free.

`python -m hologram doctor` prints the report and exits 1 when a check fails; the service's
`GET /api/v1/health` answers it (liveness without the self-test, readiness with it). Both
reach it through `Kernel.health`: this module stands below the facade and boots nothing.
"""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from hologram.config import ConfigRegistry, HealthSettings, SourceSettings

if TYPE_CHECKING:
    from hologram.llm import ProviderManager

#: Runs one turn of `text` on a virtual kernel (a temporary data dir, the offline model) and
#: gives its reply. The facade makes one; the checks never boot a kernel themselves, so this
#: module stands below the facade it reports on.
ScratchTurn = Callable[[str], Awaitable[str]]


class PluginLedger(Protocol):
    """What the plugin check reads of the plugin host: one row per plugin."""

    def status(self) -> list[dict[str, Any]]: ...


SELFTEST_INPUT = "health check: answer in one word"
_FAILING_PLUGIN_STATES = frozenset({"crashed", "failed"})


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str


@dataclass(slots=True)
class HealthReport:
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [asdict(c) for c in self.checks]}

    def render(self) -> str:
        lines = [f"{'ok  ' if c.ok else 'FAIL'} {c.name}: {c.detail}" for c in self.checks]
        verdict = "healthy" if self.ok else f"{len(self.failures())} check(s) failed"
        return "\n".join([*lines, verdict])


@dataclass(frozen=True, slots=True)
class Subject:
    """The parts of a running kernel the checks read. The facade gives them all
    (`Kernel.health`); the `health_check` tool, running inside the kernel, gives what its
    plugin host holds, with no phase: it is asked from inside a turn, which the kernel serves."""

    config: ConfigRegistry
    data_dir: Path
    llm: ProviderManager | None
    plugins: PluginLedger | None
    phase: str | None = None
    scratch_turn: ScratchTurn | None = None


async def selftest(scratch_turn: ScratchTurn | None) -> Check:
    """One turn through a virtual kernel on a temporary data dir, with the offline model."""
    if scratch_turn is None:
        return Check("selftest", False, "no virtual kernel was given to run the self-test on")
    try:
        reply = await scratch_turn(SELFTEST_INPUT)
    except Exception as exc:
        return Check("selftest", False, f"a virtual kernel failed: {type(exc).__name__}: {exc}")
    if not reply:
        return Check("selftest", False, "a virtual kernel's turn gave no reply")
    return Check("selftest", True, "a virtual kernel booted and answered one turn")


async def check_subject(subject: Subject, *, with_selftest: bool = True) -> HealthReport:
    """The report on the parts in `subject` (what `Kernel.health` gives of a running kernel)."""
    report = HealthReport()
    if with_selftest:
        report.checks.append(await selftest(subject.scratch_turn))
    if subject.phase is not None:
        ready = subject.phase == "ready"
        report.checks.append(Check("kernel", ready, f"phase {subject.phase}"))
    report.checks += await llm_checks(subject)
    report.checks += plugin_checks(subject)
    report.checks.append(disk_check(subject))
    return report


async def llm_checks(kernel: Subject) -> list[Check]:
    llm = kernel.llm
    if llm is None:
        return [Check("llm", False, "this kernel has no model sources")]
    settings = kernel.config.read(HealthSettings)
    checks = []
    async with httpx.AsyncClient(timeout=settings.reach_timeout_s) as http:
        for row in llm.status():
            name = row["source"]
            if row["offline"]:
                checks.append(Check(f"llm:{name}", True, "the offline scripted model (local)"))
                continue
            base_url = kernel.config.read(SourceSettings, name=name).base_url
            checks.append(await _reach(http, f"llm:{name}", base_url, row["state"]))
    return checks


async def _reach(http: httpx.AsyncClient, name: str, base_url: str, state: str) -> Check:
    url = base_url.rstrip("/") + "/models"
    try:
        response = await http.get(url)
    except httpx.HTTPError as exc:
        return Check(name, False, f"unreachable at {base_url}: {type(exc).__name__}: {exc}")
    return Check(name, True, f"reachable at {base_url} (HTTP {response.status_code}; {state})")


def plugin_checks(kernel: Subject) -> list[Check]:
    plugins = kernel.plugins
    if plugins is None:
        return []
    checks = []
    for row in plugins.status():
        failing = row["state"] in _FAILING_PLUGIN_STATES
        detail = f"{row['state']}, restarts {row['restarts']}"
        if row["error"]:
            detail += f", last error: {row['error']}"
        checks.append(Check(f"plugin:{row['name']}", not failing, detail))
    return checks


def disk_check(kernel: Subject) -> Check:
    needed = kernel.config.read(HealthSettings).min_free_bytes
    free = shutil.disk_usage(kernel.data_dir).free
    mib = 1024 * 1024
    detail = f"{free // mib} MiB free on the data dir's disk (needs {needed // mib} MiB)"
    return Check("disk", free >= needed, detail)
