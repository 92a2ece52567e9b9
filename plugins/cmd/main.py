"""The cmd plugin: `cmd_run` runs one shell command and answers with its output and status.

Where it runs and with what is decided for it (`hologram.plugins.confinement`): a working
directory inside the sandbox's write roots, an environment without the kernel's variables,
no network while the firewall's switch is off for the input, a process group killed whole
at the timeout or when the output passes its cap. Its output goes back through the
firewall, which masks every configured secret. The firewall also keeps it from any input
that is not the owner's (cmd_run is hard-private) unless the input's profile grants it.

Settings (`plugin.cmd.*`): `shell` (/bin/sh), `timeout_s` (30, the default per command),
`max_timeout_s` (600), `max_output_bytes` (65536), `env` (variables added to every command).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from typing import Any

from hologram.plugins.confinement import (
    Refused,
    child_environ,
    confine,
    kill_group,
    start_failure,
    working_directory,
)
from hologram.plugins.runtime import PluginApp

app = PluginApp()
AFTER_EXIT_S = 0.2
"""How long output may still arrive once the command exited (a child it left behind holds
the pipe open: after this its group is killed)."""


def setting(name: str, default: Any) -> Any:
    value = app.settings.get(name)
    return default if value is None else value


class Limits:
    def __init__(self) -> None:
        self.shell = str(setting("shell", "/bin/sh"))
        self.timeout_s = float(setting("timeout_s", 30.0))
        self.max_timeout_s = float(setting("max_timeout_s", 600.0))
        self.max_output = int(setting("max_output_bytes", 64 * 1024))
        self.env = child_environ(os.environ, setting("env", {}))


class Output:
    """The first `cap` bytes of a stream, and whether more came."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.data = bytearray()
        self.over = False

    async def read(self, stream: asyncio.StreamReader, process: asyncio.subprocess.Process) -> None:
        while chunk := await stream.read(65536):
            room = self.cap - len(self.data)
            self.data += chunk[:room]
            if len(chunk) > room:
                self.over = True
                kill_group(process.pid)  # flooding: no point in running to the timeout
                # Read on to the end, discarding: a full buffer pauses the pipe's transport,
                # its end is then never seen, and the process's wait never returns.
                while await stream.read(65536):
                    pass
                return

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


async def run(limits: Limits, command: str, directory: str, limit_s: float) -> str:
    context = app.call_context()
    network = bool(context.get("network", True))
    roots = context.get("write_roots") or [os.path.join(app.data_dir, "workspace")]
    cwd = working_directory(directory, roots)
    try:
        process = await asyncio.create_subprocess_exec(
            limits.shell,
            "-c",
            command,
            cwd=cwd,
            env=limits.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=confine(network),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise start_failure(exc, network) from None
    assert process.stdout is not None
    output = Output(limits.max_output)
    reading = app.spawn(output.read(process.stdout, process), name="cmd-output")
    try:
        async with asyncio.timeout(limit_s):
            status = await process.wait()
    except TimeoutError:
        kill_group(process.pid)
        await process.wait()
        await asyncio.wait({reading}, timeout=AFTER_EXIT_S)
        reading.cancel()
        raise TimeoutError(
            f"the command ran past its timeout of {limit_s:g} s and was killed "
            f"(with its process group). Output so far:\n{output.text()}"
        ) from None
    _, late = await asyncio.wait({reading}, timeout=AFTER_EXIT_S)
    if late:
        kill_group(process.pid)
        reading.cancel()
    text = output.text()
    if output.over:
        text += f"\n[output cut at {output.cap} bytes: the command was stopped]"
    if text and not text.endswith("\n"):
        text += "\n"
    return f"{text}[exit status {status}]"


@app.on_start
async def register(sdk: Any) -> None:
    limits = Limits()
    parameters = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1, "description": "a /bin/sh command"},
            "directory": {
                "type": "string",
                "description": "working directory, relative to the sandbox; default: its root",
            },
            "timeout_s": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": limits.max_timeout_s,
                "description": f"seconds before it is killed (default {limits.timeout_s:g})",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    async def cmd_run(args: dict[str, Any]) -> str:
        timeout = float(args.get("timeout_s") or limits.timeout_s)
        try:
            return await run(limits, args["command"], args.get("directory", ""), timeout)
        except Refused as exc:
            raise PermissionError(str(exc)) from None

    await sdk.register_tool(
        "cmd_run",
        "Run one shell command in the sandbox and get its output and exit status. No network "
        "while the network is switched off; killed at its timeout or when its output passes "
        f"{limits.max_output} bytes.",
        parameters,
        cmd_run,
        # The kernel's own cut-off must not come before the command's.
        timeout=limits.max_timeout_s + 5,
        touches_files=True,
    )


app.run()
