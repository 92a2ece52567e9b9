"""The tool schemas of a request, kept as Lua tables from one request to the next.

A turn's request is mostly its tools (40-odd schemas, ~20 KB of a ~23 KB body), and they
rarely change between turns. Sent through `transform_request` as they are, they cost most
of its ~5 ms: decoded into Python, converted table by table into Lua, and the body the
adapter returns converted table by table back and encoded again. So, per distinct tool set
(its JSON text is the key):

- in: when the script decodes the request, its `tools` are a deep copy, made inside Lua, of
  tables converted once. A copy each time, so a script that changes the tables it was given
  (or keeps them and changes them later) changes nothing that another request sees;
- out: each tool, each schema, or the whole list that the returned body still holds as the
  copy it was given, equal to what it was copied from, is encoded from JSON text made once.

Equal by construction to the plain way: the kept tables are what decoding the same text
gives, and the kept text is what encoding them gives. A script that decodes the request
text some other way, or twice, gets plain decoding.
"""

from __future__ import annotations

import json
import re
import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from hologram.llm.lua_sandbox import LuaSandbox

KEPT_TOOL_SETS = 4
"""Tool sets kept per adapter: the turn's, and a few others (a child agent's, an internal
turn's) that alternate with it."""

KEEP_FROM_BYTES = 2048
"""Tool sets smaller than this are converted each time: for a tool or two, the copying and
checking cost more than the conversion they save."""

_STAND_IN = re.compile('"hologram-json-([0-9a-f]{16})-([0-9]+)"')


@dataclass(frozen=True, slots=True)
class _ToolSet:
    tools: Any
    """The Lua list, as decoding the set's JSON text gives it; never handed to a script."""
    marks: Any
    """Lua table: kept table -> its id."""
    tables: Any
    """Lua table: id -> kept table."""
    texts: list[str]
    """The JSON text of table id (at id - 1)."""


class ToolTables:
    """One adapter's kept tool sets."""

    def __init__(self, sandbox: LuaSandbox, size: int = KEPT_TOOL_SETS) -> None:
        self._sandbox = sandbox
        self._size = size
        self._sets: OrderedDict[str, _ToolSet] = OrderedDict()
        #: Tool sets converted into Lua (a set seen again is not converted again).
        self.converted = 0

    def request(self, request: dict[str, Any]) -> ToolRequest | None:
        """What one request needs to use its kept tool set; None for a request without
        tools or with few (nothing to gain), or when none are kept."""
        tools = request.get("tools")
        if not self._size or not isinstance(tools, list) or not tools:
            return None
        text = json.dumps(tools, ensure_ascii=False)
        if len(text) < KEEP_FROM_BYTES:
            return None
        return ToolRequest(self._sandbox, self._set(text), request, text)

    def _set(self, text: str) -> _ToolSet:
        found = self._sets.get(text)
        if found is not None:
            self._sets.move_to_end(text)
            return found
        sandbox = self._sandbox
        tools = sandbox.to_lua(json.loads(text))
        marks, tables, count = sandbox.kept.mark(tools)
        texts = [
            json.dumps(sandbox.to_python(tables[i]), ensure_ascii=False)
            for i in range(1, count + 1)
        ]
        found = _ToolSet(tools, marks, tables, texts)
        self.converted += 1
        self._sets[text] = found
        while len(self._sets) > self._size:
            self._sets.popitem(last=False)
        return found


class ToolRequest:
    """One request's use of a kept tool set: the text the script receives, the table its
    decoding gives, and the body's encoding."""

    def __init__(
        self, sandbox: LuaSandbox, tool_set: _ToolSet, request: dict[str, Any], text: str
    ) -> None:
        self._sandbox = sandbox
        self._set = tool_set
        self._request = request
        self._nonce = secrets.token_hex(8)
        self._known: Any = None
        # The request's text, the tools' text spliced in where json.dumps would write it.
        marker = f"hologram-tools-{self._nonce}"
        self.raw = json.dumps({**request, "tools": marker}, ensure_ascii=False).replace(
            f'"{marker}"', text, 1
        )

    def decoded(self) -> Any:
        """The request as a Lua table, its tools a fresh copy of the kept ones."""
        sandbox = self._sandbox
        self._known = known = sandbox.table()
        tools = sandbox.kept.copy(self._set.tools, self._set.marks, known)
        # to_lua leaves a Lua table as it is, in its place among the keys.
        return sandbox.to_lua({**self._request, "tools": tools})

    def encode(self, result: Any) -> str:
        """The JSON text of `result` (a Lua table the script returned). ValueError as
        `LuaSandbox.to_python` raises it."""
        sandbox = self._sandbox
        if self._known is None:
            return json.dumps(sandbox.to_python(result), ensure_ascii=False)
        prefix = f"hologram-json-{self._nonce}-"
        undo, swapped = sandbox.kept.swap(result, self._known, self._set.tables, prefix)
        try:
            data = sandbox.to_python(result)
        finally:
            # The script may hold on to the table it returned: it gets it back as it was.
            sandbox.kept.unswap(undo)
        body = json.dumps(data, ensure_ascii=False)
        return self._restore(body) if swapped else body

    def _restore(self, body: str) -> str:
        texts = self._set.texts
        pieces = _STAND_IN.split(body)
        for at in range(1, len(pieces), 3):
            nonce, index = pieces[at], pieces[at + 1]
            if nonce == self._nonce and 1 <= int(index) <= len(texts):
                pieces[at], pieces[at + 1] = texts[int(index) - 1], ""
            else:  # not one of ours: written by the conversation or the script
                pieces[at], pieces[at + 1] = f'"hologram-json-{nonce}-', f'{index}"'
        return "".join(pieces)
