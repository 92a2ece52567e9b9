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
`GET /api/v1/health` answers it (liveness without the self-test, readiness with it).
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from hologram.config import ConfigRegistry, HealthSettings, SourceSettings

if TYPE_CHECKING:
    from hologram.facade import Kernel
    from hologram.llm import ProviderManager
    from hologram.plugins.registry import PluginRegistry

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
    (`of_kernel`); the `health_check` tool, running inside the kernel, gives what its plugin
    host holds, with no phase: it is asked from inside a turn, which the kernel serves."""

    config: ConfigRegistry
    data_dir: Path
    llm: ProviderManager | None
    plugins: PluginRegistry | None
    phase: str | None = None

    @classmethod
    def of_kernel(cls, kernel: Kernel) -> Subject:
        state = kernel.state
        return cls(kernel.config, kernel.data_dir, state.llm, state.plugins, str(kernel.phase))


async def selftest() -> Check:
    """One turn through a virtual kernel on a temporary data dir, with the offline model."""
    from hologram.facade import Kernel

    try:
        with tempfile.TemporaryDirectory(prefix="hologram-selftest-") as scratch:
            async with Kernel(scratch, environ={}) as virtual:
                reply = await virtual.say(SELFTEST_INPUT)
    except Exception as exc:
        return Check("selftest", False, f"a virtual kernel failed: {type(exc).__name__}: {exc}")
    if not reply:
        return Check("selftest", False, "a virtual kernel's turn gave no reply")
    return Check("selftest", True, "a virtual kernel booted and answered one turn")


async def check(kernel: Kernel, *, with_selftest: bool = True) -> HealthReport:
    """Every check of `kernel` (a running one), the self-test first when asked."""
    return await check_subject(Subject.of_kernel(kernel), with_selftest=with_selftest)


async def check_subject(subject: Subject, *, with_selftest: bool = True) -> HealthReport:
    """The report `check` gives, of the parts in `subject`."""
    report = HealthReport()
    if with_selftest:
        report.checks.append(await selftest())
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


async def doctor(data: str | None) -> int:
    """`python -m hologram doctor`: the report of the kernel on `data`; 1 on a failure."""
    from hologram.facade import Kernel

    try:
        async with Kernel(data) as kernel:
            report = await check(kernel)
    except Exception as exc:
        print(f"FAIL kernel: it does not boot: {type(exc).__name__}: {exc}")
        return 1
    print(report.render())
    return 0 if report.ok else 1
