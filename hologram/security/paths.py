"""The path sandbox: a path a tool is given must stay inside the read or write roots.

A path is refused, with the reason, before anything touches the file system when it:
holds a NUL byte or another control character; is percent-encoded (`%2e%2e%2f`), which some
layer below might decode after the check; uses look-alike characters (fullwidth `．．／`,
the one-dot leader, division and fraction slashes, zero-width or direction marks) that a
normalising layer might turn into `../`; uses a backslash; has a `..` part anywhere (even
one that would end inside: a rule with no exceptions is one a reader can check); is absolute
and outside every root; or resolves outside every root once symbolic links are followed.
Ordinary non-ASCII names (a Chinese file name) are fine.

A path that a shell or a URL handler would expand is refused as ambiguous, not guessed at:
whoever wrote `$HOME/notes` most likely meant the expansion, and the sandbox would check a
literal folder called `$HOME` while a shell tool (`cmd_run`) ran on the real home. Refused:

* an environment variable anywhere in the path, as a shell writes it (`$HOME`, `${HOME}`,
  `$(cmd)`, backquotes) or as Windows does (`%APPDATA%`): a shell expands these in the middle
  of a word too, so `a$b.txt` is refused as well;
* a leading tilde (`~`, `~/x`, `~root/x`);
* a `file:` URL, or any other `scheme://` URL, in place of a path.

Kept literal, deliberately: a `$` before a digit, another `$` or punctuation
(`price$5.txt`, `cost$.txt`), which reads as a name, not a variable (a shell's positional
parameters are not something anyone means in a path); a `~` anywhere but the start
(`a~b.txt`, `notes.txt~`, `docs/~draft.md`: shells expand only a word's leading tilde); a
`%` that does not close a name (`100%.txt`).
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from collections.abc import Sequence
from pathlib import Path

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}|%u[0-9A-Fa-f]{4}")
_LOOKALIKES = frozenset(
    "\u2024\u2025\u2026\uff0e\u3002\ufe52\u00b7\u2027\u2215\u2044\u29f8\u2571\uff0f"
    "\u2216\uff3c\ufe68\u29f5\u29f9\u2573\u02d9\u0701\u0702\ua4f8\u2e31"
)
"""Dots and slashes from other blocks; NFKC maps some of these to ASCII, not all."""
_SHELL_EXPANSION = re.compile(r"\$(?:\{[^}]*\}?|\([^)]*\)?|[A-Za-z_]\w*)|`[^`]*`?")
# Two hex digits or %uXXXX between percent signs are percent-encoding, refused as that.
_WINDOWS_VARIABLE = re.compile(r"%(?![0-9A-Fa-f]{2}%|u[0-9A-Fa-f]{4})[A-Za-z_][\w()]*%")
_URL_SCHEME = re.compile(r"(?:file:|[A-Za-z][A-Za-z0-9+.-]*://)", re.IGNORECASE)
# A path of these characters only has nothing below for `_plain` to find (no control or
# format character, look-alike, `$`, backquote, `%`, `~`, `:` or backslash): most paths.
_ORDINARY = re.compile(r"[A-Za-z0-9_./ +=,@-]+")
_SEND_INSTEAD = "send the path as it is on disk, relative to a root or absolute inside one"


class PathRefused(ValueError):
    """A path the sandbox will not let a tool use; the message says why."""


class PathSandbox:
    """Read and write roots, and the check every path argument goes through."""

    def __init__(self, read_roots: Sequence[Path], write_roots: Sequence[Path]) -> None:
        self._as_given_write = [Path(os.path.abspath(r)) for r in write_roots]
        self._as_given_read = [Path(os.path.abspath(r)) for r in (*read_roots, *write_roots)]
        self.write_roots = [Path(os.path.realpath(r)) for r in write_roots]
        # Writing somewhere implies reading there.
        reads = [Path(os.path.realpath(r)) for r in read_roots]
        self.read_roots = reads + [r for r in self.write_roots if r not in reads]
        # The checks below run on strings: a tool call's path check is on the firewall's
        # per-call budget, and pathlib objects cost more to build than the check itself.
        self._real_write = [str(r) for r in self.write_roots]
        self._real_read = [str(r) for r in self.read_roots]
        self._given_write = [*self._real_write, *map(str, self._as_given_write)]
        self._given_read = [*self._real_read, *map(str, self._as_given_read)]

    def roots(self, write: bool) -> list[Path]:
        return self.write_roots if write else self.read_roots

    def check(self, raw: object, *, write: bool = False) -> Path:
        """The real path `raw` names, inside a root; else `PathRefused` saying why."""
        return Path(self.check_text(raw, write=write))

    def check_text(
        self, raw: object, *, write: bool = False, modes: dict[str, int | None] | None = None
    ) -> str:
        """`check`, as a string. `modes` carries what `os.lstat` said of each path between
        the checks of one tool call's paths (a list of files in one folder looks at the
        folder once); it must not outlive the call, or a link made since would be missed."""
        kind = "write" if write else "read"
        roots = self._real_write if write else self._real_read
        if not roots:
            raise PathRefused(f"no {kind} roots are configured: this tool may not {kind} files")
        text = _plain(raw)
        parts = [p for p in text.split("/") if p and p != "."]
        if ".." in parts:
            raise PathRefused(f"path {_show(text)} contains '..', which could leave the roots")
        absolute = text.startswith("/")
        candidate = "/" + "/".join(parts) if absolute else _join(roots[0], parts)
        real = _resolve(candidate, roots, {} if modes is None else modes)
        if any(_inside(real, r) for r in roots):
            return real
        given = self._given_write if write else self._given_read
        if absolute and not any(_inside(candidate, r) for r in given):
            raise PathRefused(
                f"absolute path {_show(text)} is outside the {kind} roots: " + ", ".join(roots)
            )
        raise PathRefused(
            f"path {_show(text)} resolves outside the {kind} roots (a symbolic link "
            "leads out of them)"
        )


def _plain(raw: object) -> str:
    if not isinstance(raw, str):
        raise PathRefused(f"a path is a string, not {type(raw).__name__}")
    if not raw:
        raise PathRefused("the path is empty")
    if _ORDINARY.fullmatch(raw):
        return raw
    if "\x00" in raw:
        raise PathRefused("the path contains a NUL byte")
    # ASCII has no look-alikes, format characters or compatibility forms to look for.
    for char in _CONTROL.findall(raw) if raw.isascii() else raw:
        category = unicodedata.category(char)
        if category == "Cc":
            raise PathRefused(f"the path contains control character U+{ord(char):04X}")
        if category == "Cf":
            raise PathRefused(
                f"the path contains invisible format character U+{ord(char):04X} "
                "(zero-width or direction mark)"
            )
        if char in _LOOKALIKES:
            raise PathRefused(
                f"the path contains U+{ord(char):04X} ({unicodedata.name(char, '?').lower()}), "
                "which looks like a dot or a slash; use the ASCII characters"
            )
    _refuse_expansions(raw)
    if _PERCENT.search(raw):
        raise PathRefused(
            f"path {_show(raw)} is percent-encoded; give the plain path (no %XX escapes)"
        )
    if not raw.isascii() and not unicodedata.is_normalized("NFKC", raw):
        raise PathRefused(
            f"path {_show(raw)} uses compatibility forms (fullwidth or similar letters); "
            "give it in plain characters"
        )
    if "\\" in raw:
        raise PathRefused(f"path {_show(raw)} contains a backslash; separate parts with '/'")
    return raw


def _refuse_expansions(raw: str) -> None:
    """Refuse what a shell or a URL handler would turn into some other path."""
    if _URL_SCHEME.match(raw):
        scheme = raw.split(":", 1)[0].lower()
        raise PathRefused(
            f"path {_show(raw)} is a {scheme}: URL, not a path; the sandbox does not guess "
            f"what a URL handler would make of it: {_SEND_INSTEAD}"
        )
    if raw.startswith("~"):
        raise PathRefused(
            f"path {_show(raw)} starts with '~', which a shell would expand to a home "
            f"directory; the sandbox does not guess which: {_SEND_INSTEAD}"
        )
    found = _SHELL_EXPANSION.search(raw) or _WINDOWS_VARIABLE.search(raw)
    if found is not None:
        raise PathRefused(
            f"path {_show(raw)} holds {_show(found[0])}, which a shell would expand (an "
            "environment variable or a command substitution); the sandbox does not guess "
            f"what it stands for: {_SEND_INSTEAD}"
        )


def _resolve(candidate: str, roots: list[str], modes: dict[str, int | None]) -> str:
    """`os.path.realpath(candidate)`, cheaper in the common case: below a root (already
    real) only the remaining parts are looked at, and once a part does not exist nothing
    after it can be a link. Any link found hands over to realpath for the whole path."""
    for root in roots:
        if _inside(candidate, root):
            current = root.rstrip("/")
            rest = candidate[len(current) + 1 :].split("/") if candidate != root else []
            for index, part in enumerate(rest):
                current = current + "/" + part
                if current in modes:
                    mode = modes[current]
                else:
                    try:
                        mode = os.lstat(current).st_mode
                    except (FileNotFoundError, NotADirectoryError):
                        mode = None
                    modes[current] = mode
                if mode is None:
                    return _join(current, rest[index + 1 :])
                if stat.S_ISLNK(mode):
                    return os.path.realpath(candidate)
            return current or "/"
    return os.path.realpath(candidate)


def _join(base: str, parts: list[str]) -> str:
    if not parts:
        return base
    return base.rstrip("/") + "/" + "/".join(parts)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _show(text: str) -> str:
    # The path goes back to the model in the reason; keep it printable and short.
    return ascii(text[:120])
