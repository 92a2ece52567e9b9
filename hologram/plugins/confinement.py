"""The environment and confinement of a process a tool starts for the model (`cmd_run`, a
terminal): what it inherits, where it may run, and whether it reaches the network.

**Environment.** A child gets only the variables a shell needs to work (`PATH`, `HOME`, the
locale, the terminal type…), never the kernel's own: those hold API keys and tokens. The
owner may add variables; a name that looks like a secret's is refused there, with the reason.

**Working directory.** It must resolve (symbolic links followed) inside one of the sandbox's
write roots, which the firewall sends with every call: a command may write where it runs.

**Network switch.** With the network switched off for the input, the child starts in a new,
empty network namespace (Linux `unshare`; as root directly, otherwise inside a new user
namespace that maps the caller's own ids). There not even loopback is up. Where the platform
refuses, the command is refused too: the switch is never silently ignored.

Only the standard library is used: a plugin process imports this without the kernel.
"""

from __future__ import annotations

import contextlib
import ctypes
import fnmatch
import os
import re
import signal
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

KEPT = ("PATH", "HOME", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ", "USER", "LOGNAME", "SHELL")
"""Variables passed on from the plugin's own environment."""

SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE", re.IGNORECASE
)

_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_PR_SET_PDEATHSIG = 1


class Refused(PermissionError):
    """The process may not start as asked; the message says why, for the model to read."""


def child_environ(
    base: Mapping[str, str], extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a child: the kept names of `base`, then the owner's `extra`."""
    env = {
        name: value
        for name, value in base.items()
        if any(fnmatch.fnmatchcase(name, kept) for kept in KEPT) and not SECRET_NAME.search(name)
    }
    for name, value in (extra or {}).items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise ValueError("extra environment variables are names and values, both strings")
        if SECRET_NAME.search(name):
            raise ValueError(
                f"environment variable {name!r} looks like a secret; commands never get "
                "secrets in their environment (pass @{alias} in the command instead)"
            )
        env[name] = value
    return env


def working_directory(given: str, roots: Iterable[str]) -> Path:
    """The real directory `given` names (relative to the first root; empty: the first root
    itself), which must lie inside a root and exist."""
    real_roots = [Path(os.path.realpath(r)) for r in roots]
    if not real_roots:
        raise Refused("no sandbox write roots are configured, so there is nowhere to run")
    if "\x00" in given:
        raise Refused("the directory contains a NUL byte")
    if not given:
        real_roots[0].mkdir(parents=True, exist_ok=True)
        return real_roots[0]
    path = Path(os.path.realpath(real_roots[0] / given))
    if not any(path == root or root in path.parents for root in real_roots):
        shown = ", ".join(map(str, real_roots))
        raise Refused(f"directory {given!r} is outside the sandbox roots ({shown})")
    if not path.is_dir():
        raise Refused(f"directory {given!r} does not exist (create it first)")
    return path


def confine(network: bool) -> Callable[[], None]:
    """The function a child runs before the command (`preexec_fn`): die with its parent,
    and, with the network off, leave the network. It raises in the child when the platform
    will not isolate it, which makes the start fail: see `start_failure`."""
    uid, gid = os.getuid(), os.getgid()
    # Loaded here, in the parent: the child of a process with threads must not take the
    # dynamic loader's lock (another thread may have held it at the fork).
    libc = ctypes.CDLL(None, use_errno=True)

    def enter() -> None:
        if sys.platform.startswith("linux"):
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if network:
            return
        if not sys.platform.startswith("linux"):
            raise OSError("no network namespaces on this platform")
        as_root = os.geteuid() == 0
        flags = _CLONE_NEWNET if as_root else _CLONE_NEWUSER | _CLONE_NEWNET
        if libc.unshare(flags) != 0:
            raise OSError(ctypes.get_errno(), "unshare")
        if not as_root:
            for name, text in (
                ("setgroups", "deny"),
                ("uid_map", f"{uid} {uid} 1"),
                ("gid_map", f"{gid} {gid} 1"),
            ):
                with open(f"/proc/self/{name}", "w") as handle:
                    handle.write(text)

    return enter


def start_failure(exc: BaseException, network: bool) -> Refused:
    """Why a child did not start, in words for the model."""
    if not network:
        # The child's own error does not cross the fork (Python reports only that
        # preexec_fn failed): what failed is the network namespace.
        return Refused(
            "the network is switched off for this input, and this system cannot start a "
            "process without network access (no network namespace for this user); "
            "it was not run"
        )
    return Refused(f"the process could not start: {exc}")


def kill_group(pid: int) -> None:
    """SIGKILL the child's whole process group (it leads its own session)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
