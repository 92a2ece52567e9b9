"""A sandboxed Lua 5.4 runtime with the adapter built-ins (spec 001: Lua VM capabilities).

What a script can reach: the pure parts of the standard library (string without `dump`,
table, math, utf8, coroutine, the base functions that do not load code or bypass
metatables), plus `json.encode` / `json.decode` / `json.null` / `json.array`, `log(level, msg)`,
`http_get(url)` and `http_post(url, body)`. No `os`, `io`, `package`, `require`, `dofile`,
`loadfile`, `load`, `debug`, no bytecode, and no attribute access into Python objects.
Memory is capped by the runtime; CPU by an instruction-count hook set on every call.

**Why a coroutine bridge for HTTP.** Every call into Lua runs as a Lua coroutine on the
event-loop thread. `http_get`/`http_post` yield a request out of the coroutine; the Python
driver performs it with httpx's async client (with a timeout) and resumes the coroutine
with the answer. The loop is never blocked on the network, the transforms (tens of
microseconds) pay no thread hop, and since Lua only ever runs on the loop thread the
runtime needs no lock. The instruction limit bounds how long a runaway script can hold the
loop (a few tens of milliseconds).

**JSON and Lua tables.** Decoded arrays are marked (metatable `json.array`), so an array
that comes in empty goes out as `[]`. An unmarked empty table encodes as `{}`: in the wire
formats adapters write, empty objects (`"properties": {}`, `"arguments": {}`) are the
common case; a script that wants an empty array writes `json.array()`. JSON `null` inside
an object drops the key (Lua cannot hold nil in a table); inside an array it becomes
`json.null`, so positions survive.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

import lupa.lua54 as lupa

log = logging.getLogger(__name__)

DEFAULT_MAX_MEMORY = 64 * 1024 * 1024
DEFAULT_INSTRUCTION_LIMIT = 20_000_000
_HOOK_EVERY = 1000  # instructions between two ticks of the limit hook

_REMOVED_GLOBALS = (
    *("os", "io", "package", "require", "dofile", "loadfile", "load", "loadstring", "debug"),
    *("collectgarbage", "rawset", "rawget", "setfenv", "getfenv", "module", "python"),
)

HttpHandler = Callable[[str, str, str | None], Awaitable[tuple[str | None, int | str]]]
"""(method, url, body) -> (response body, status) or (None, error message)."""
HostHandler = Callable[[str, list[Any]], Awaitable[Any]]
"""(name, arguments as plain data) -> plain data; an exception becomes a Lua error."""


class LuaSandboxError(Exception):
    """A script failed to load or a call into it failed; the message carries file:line."""

    def __init__(self, message: str, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.cause = cause


class _Null:
    """JSON null inside an array (Lua has no nil array slots)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "json.null"


NULL = _Null()
_PLAIN = frozenset({str, int, float, bool})  # values that cross between Python and Lua as they are
_EMPTY_ARRAY = re.compile(r"\[\s*\]")


def _whole_convertible(text: str) -> bool:
    """Whether JSON `text` surely holds neither an empty array nor a null in an array: the
    two things lupa's conversion of a whole value cannot carry (it cannot tell [] from {},
    and a nil leaves a hole). Text inside strings may look like either: such a value just
    takes the careful way. A scan for `null` (a chunk often has a null or two, in objects)
    and one search: a regular expression for both cost twice as much."""
    at = text.find("null")
    while at != -1:
        before = at - 1
        while before >= 0 and text[before] in " \t\r\n":
            before -= 1
        if before >= 0 and text[before] in "[,":
            return False
        at = text.find("null", at + 4)
    return _EMPTY_ARRAY.search(text) is None


_HTTP = object()  # marks a coroutine.yield that is an http_* request, not the script's own
_HOST = object()  # marks a yield that is a call of a host function (`host_function`)
_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


def _refuse_attributes(obj: object, name: object, is_setting: bool) -> object:
    raise AttributeError(f"Lua scripts may not access attributes of Python objects ({name!r})")


# Runs with the full standard library, before it is taken away: it keeps private references
# to `load`, `debug.sethook` and the coroutine functions in upvalues, which scripts cannot
# reach once `debug` is gone.
_SETUP = """
local py_decode, py_encode, py_log, NULL, HTTP, HOST, HOOK_EVERY = ...
local load, sethook = load, debug.sethook
local create, resume, status, yield, isyieldable =
    coroutine.create, coroutine.resume, coroutine.status, coroutine.yield, coroutine.isyieldable
local setmetatable, getmetatable, error, tostring, select, type = setmetatable, getmetatable,
    error, tostring, select, type
local pack, concat, pcall = table.pack, table.concat, pcall
local ARRAY = {__name = "json.array"}

json = {null = NULL}
function json.array(t) return setmetatable(t or {}, ARRAY) end
function json.is_array(t) return getmetatable(t) == ARRAY end
local next, mathtype = next, math.type
-- A table converted whole by the host: the ones that were JSON arrays have integer keys
-- (object keys are always strings), and the host sends none that was empty.
local function mark_arrays(t)
  if mathtype((next(t))) == "integer" then setmetatable(t, ARRAY) end
  for _, v in next, t do
    if type(v) == "table" then mark_arrays(v) end
  end
end
function json.decode(text)
  if type(text) ~= "string" then error("json.decode expects a string, got " .. type(text), 2) end
  local ok, value, whole = py_decode(text)
  if not ok then error("json.decode: " .. value, 2) end
  if whole then mark_arrays(value) end
  return value
end
function json.encode(value)
  local ok, text = py_encode(value)
  if not ok then error("json.encode: " .. text, 2) end
  return text
end
function log(level, ...)
  local parts = {}
  for i = 1, select("#", ...) do parts[#parts + 1] = tostring((select(i, ...))) end
  py_log(tostring(level), concat(parts, " "))
end
print = function(...) log("debug", ...) end

local function http(method, url, body)
  if type(url) ~= "string" then error("http_" .. method:lower() .. ": url must be a string", 3) end
  if not isyieldable() then error("http_get/http_post can only be called inside a transform", 3) end
  return yield(HTTP, method, url, body)
end
function http_get(url) return http("GET", url, nil) end
function http_post(url, body)
  if type(body) == "table" then body = json.encode(body) end
  return http("POST", url, body)
end

string.dump = nil

local M = {}
-- A function of the host's that Python runs asynchronously: the call yields out of the
-- coroutine like http_* does, and the answer (or the error) comes back on resume.
function M.host_function(name)
  return function(...)
    if not isyieldable() then error(name .. " can only be called inside a handler", 2) end
    local args = setmetatable({}, ARRAY)
    for i = 1, select("#", ...) do
      local v = select(i, ...)
      if v == nil then v = NULL end
      args[i] = v
    end
    local ok, value = yield(HOST, name, args)
    if not ok then error(value, 2) end
    return value
  end
end
function M.mark_array(t) return setmetatable(t, ARRAY) end

function M.is_array(t) return getmetatable(t) == ARRAY end
function M.compile(source, chunkname)
  local fn, err = load(source, chunkname, "t", _ENV)
  return fn, err
end
-- A script's top level runs in a coroutine of its own (calls run in workers, below).
function M.start(fn, budget)
  local co = create(fn)
  local ticks = 0
  sethook(co, function()
    ticks = ticks + 1
    if ticks > budget then error("instruction limit exceeded", 2) end
  end, "", HOOK_EVERY)
  return function(...)
    local r = pack(resume(co, ...))
    return r[1], status(co) == "dead", r[2], r[3], r[4], r[5]
  end
end
-- A call runs in a worker: a coroutine that runs one call after another, each under
-- pcall, and waits between them. Workers are kept from one call to the next: a coroutine
-- made and hooked anew for every call was a fifth of a small transform's time when the
-- process ran cold, as it does at a stream's first frame (a reply's first words wait on
-- it). Each worker has its own budget, reset per call, so two calls waiting on HTTP at
-- the same time (each in its own worker) never share a counter. A worker whose call
-- yielded outside http_*/host functions is left suspended and dropped, never reused.
local DONE = {}
local idle, idle_count, KEEP_IDLE = {}, 0, 4
local function serve(...)
  return serve(yield(DONE, pcall(...)))
end
local function new_worker()
  local w = { ticks = 0, budget = 0 }
  w.co = create(serve)
  sethook(w.co, function()
    local ticks = w.ticks + 1
    w.ticks = ticks
    if ticks > w.budget then error("instruction limit exceeded", 2) end
  end, "", HOOK_EVERY)
  return w
end
-- (ok, dead, first, method, url, body) of one step of worker `w`'s call.
local function finish(w, resumed, a, b, c, d)
  if not resumed then return false, true, a, nil, nil, nil end  -- the worker itself failed
  if a == DONE then
    if idle_count < KEEP_IDLE then
      idle_count = idle_count + 1
      idle[idle_count] = w
    end
    return b, true, c, nil, nil, nil
  end
  return true, false, a, b, c, d
end
-- Start a call and take its first step in one crossing from Python (the common case: a
-- transform that never yields is done then); the step function comes back only when the
-- call yielded and has more steps to take.
function M.run(fn, budget, ...)
  local w
  if idle_count > 0 then
    w = idle[idle_count]
    idle[idle_count] = nil
    idle_count = idle_count - 1
  else
    w = new_worker()
  end
  w.ticks, w.budget = 0, budget
  local ok, dead, a, b, c, d = finish(w, resume(w.co, fn, ...))
  if dead then return ok, dead, a, b, c, d, nil end
  return ok, dead, a, b, c, d, function(...) return finish(w, resume(w.co, ...)) end
end
return M
"""


class LuaSandbox:
    """One Lua runtime, owned by one adapter (or one Lua plugin)."""

    def __init__(
        self,
        name: str,
        *,
        max_memory: int = DEFAULT_MAX_MEMORY,
        instruction_limit: int = DEFAULT_INSTRUCTION_LIMIT,
        logger: logging.Logger | None = None,
    ) -> None:
        self.name = name
        self.instruction_limit = instruction_limit
        self._ticks = max(1, instruction_limit // _HOOK_EVERY)  # the hook counts in thousands
        self._log = logger or logging.getLogger(f"hologram.lua.{name}")
        # types-lupa's constructor names only `unpack_returned_tuples`; lupa's own (a Cython
        # `__cinit__` the stubs do not transcribe) takes all of these.
        self._lua = lupa.LuaRuntime(  # type: ignore[call-arg]
            register_eval=False,
            register_builtins=False,
            unpack_returned_tuples=True,
            attribute_filter=_refuse_attributes,
            max_memory=max_memory,
        )
        self._table_from = self._lua.table_from
        # A Lua table of the setup's functions; the stubs type what `execute` returns as
        # `object`, and any Lua value as `Any` (`_LuaObject`), since its shape is Lua's.
        helpers: Any = self._lua.execute(
            _SETUP, self._py_decode, self._py_encode, self._py_log, NULL, _HTTP, _HOST, _HOOK_EVERY
        )
        self._host_function = helpers.host_function
        self._compile = helpers.compile
        self._start = helpers.start
        self._run = helpers.run
        self._mark_array = helpers.mark_array
        self._is_array = helpers.is_array
        env = self._lua.globals()
        for name_ in _REMOVED_GLOBALS:
            env[name_] = None

    # ---- loading ----------------------------------------------------------------------------

    def load(self, source: str, chunkname: str) -> Any:
        """Run a script's top level and return what it returns. Text only: a precompiled
        (bytecode) chunk is refused by the loader."""
        fn, error = self._compile(source, "@" + chunkname)
        if fn is None:
            raise LuaSandboxError(f"cannot load {chunkname}: {error}")
        ok, dead, value, *_ = self._start(fn, self._ticks)()
        if not ok:
            raise LuaSandboxError(f"{chunkname} failed while loading: {self._describe(value)}")
        if not dead:
            if value is _HTTP:
                why = "called http_get/http_post while loading; call them inside a transform"
            elif value is _HOST:
                why = "called a host function while loading; call it inside a handler"
            else:
                why = "yielded while loading; it must return its table"
            raise LuaSandboxError(f"{chunkname} {why}")
        return value

    def set_global(self, name: str, value: Any) -> None:
        """Give scripts a global: plain data becomes Lua tables, Python callables stay
        callable (their attributes stay out of reach). For hosts that add built-ins of their
        own, such as the `sdk` table of a Lua plugin."""
        self._lua.globals()[name] = self.to_lua(value)

    def host_function(self, name: str) -> Any:
        """A Lua function that calls the host's async `name` (through `call(host=...)`):
        its arguments arrive as plain data, its answer returns to the script, and an
        exception the host raises becomes a Lua error the script may `pcall`."""
        return self._host_function(name)

    # ---- calling ----------------------------------------------------------------------------

    async def call(
        self,
        fn: Any,
        *args: Any,
        http: HttpHandler | None = None,
        host: HostHandler | None = None,
    ) -> Any:
        """Call a Lua function; each `http_get`/`http_post` it makes is awaited through
        `http`, each host function through `host`. Returns the first value the function
        returns (a Lua object)."""
        ok, dead, first, method, url, body, step = self._run(fn, self._ticks, *args)
        while True:
            if not ok:
                raise LuaSandboxError(self._describe(first), _cause(first))
            if dead:
                return first
            if first is _HOST:
                ok, dead, first, method, url, body = step(*await self._host_call(host, method, url))
                continue
            if first is not _HTTP:
                raise LuaSandboxError("the script yielded outside http_get/http_post")
            if http is None:
                result: tuple[str | None, int | str] = (None, "http_* is not available here")
            else:
                result = await http(method, url, body)
            ok, dead, first, method, url, body = step(*result)

    async def _host_call(self, host: HostHandler | None, name: str, args: Any) -> tuple[bool, Any]:
        if host is None:
            return False, f"{name} is not available here"
        try:
            value = await host(name, self.to_python(args))
        except Exception as exc:  # the script's error to handle or to report, not ours
            return False, f"{name}: {exc}"
        return True, self.to_lua(value)

    def call_sync(self, fn: Any, *args: Any) -> Any:
        """Call a Lua function that does no HTTP (the hot path of the transforms)."""
        ok, dead, first, *_ = self._run(fn, self._ticks, *args)
        if not ok:
            raise LuaSandboxError(self._describe(first), _cause(first))
        if not dead:
            raise LuaSandboxError(
                "the script used http_get/http_post or a host function where it is not allowed"
            )
        return first

    # ---- values -----------------------------------------------------------------------------

    def to_python(self, value: Any, path: str = "$") -> Any:
        """A Lua value as plain Python data (dict, list, str, int, float, bool, None)."""
        if type(value) in _PLAIN:
            return value
        if value is None or value is NULL:
            return None
        kind = lupa.lua_type(value)
        if kind == "table":
            return self._table_to_python(value, path)
        if kind is not None:
            raise ValueError(f"{path}: a Lua {kind} cannot become JSON")
        if isinstance(value, bytes):
            return value.decode("utf-8", "replace")
        raise ValueError(f"{path}: a Python {type(value).__name__} cannot become JSON")

    def _table_to_python(self, table: Any, path: str) -> Any:
        # This runs for every table a transform returns, so scalars are copied inline and
        # only nested tables recurse (the hot path of the ≤150 µs transform target).
        items = list(table.items())
        if not items:
            return [] if self._is_array(table) else {}
        if type(items[0][0]) is str:
            obj: dict[str, Any] = {}
            for key, item in items:
                if type(key) is not str:
                    raise ValueError(f"{path}: a table that mixes array and object keys")
                obj[key] = item if type(item) in _PLAIN else self.to_python(item, f"{path}.{key}")
            return obj
        size = len(items)
        array: list[Any] = [None] * size
        for key, item in items:
            if type(key) is not int:
                raise ValueError(f"{path}: a table that mixes array and object keys")
            if not 1 <= key <= size:
                keys = sorted(k for k, _ in items if type(k) is int)
                raise ValueError(f"{path}: an array with holes (keys {keys[:8]})")
            array[key - 1] = (
                item if type(item) in _PLAIN else self.to_python(item, f"{path}[{key - 1}]")
            )
        return array

    def table(self) -> Any:
        """A new empty Lua table (for the host's own bookkeeping)."""
        return self._lua.table()

    def to_lua(self, value: Any) -> Any:
        """Plain Python data as Lua tables (arrays marked, nulls handled as documented)."""
        if isinstance(value, dict):
            return self._table_from(
                {
                    k: v if type(v) in _PLAIN else self.to_lua(v)
                    for k, v in value.items()
                    if v is not None
                }
            )
        if isinstance(value, list):
            return self._mark_array(
                self._table_from(
                    [
                        v if type(v) in _PLAIN else NULL if v is None else self.to_lua(v)
                        for v in value
                    ]
                )
            )
        return value

    # ---- built-ins --------------------------------------------------------------------------

    def _py_decode(self, text: str) -> tuple[bool, Any, bool]:
        """(ok, value or error, whether the script side still marks the arrays)."""
        try:
            value = json.loads(text)
            if type(value) in (dict, list) and _whole_convertible(text):
                # No empty array and no null in one: lupa converts the whole value in one
                # call, and the script side marks the arrays (a third of what the
                # conversion table by table costs; a stream pays it for every chunk).
                return True, self._table_from(value, recursive=True), True
            return True, self.to_lua(value), False
        except (ValueError, RecursionError) as exc:
            return False, str(exc), False

    def _py_encode(self, value: Any) -> tuple[bool, str]:
        try:
            data = self.to_python(value)
            return True, json.dumps(data, ensure_ascii=False, allow_nan=False)
        except (ValueError, TypeError, RecursionError) as exc:
            return False, str(exc)

    def _py_log(self, level: str, message: str) -> None:
        number = _LEVELS.get(level.lower())
        if number is None:
            message = f"[unknown level {level!r}] {message}"
            number = logging.INFO
        self._log.log(number, "%s: %s", self.name, message)

    def _describe(self, value: Any) -> str:
        if isinstance(value, BaseException):
            return f"{type(value).__name__}: {value}"
        if lupa.lua_type(value) == "table":
            try:
                return "error " + json.dumps(self.to_python(value), ensure_ascii=False)
            except ValueError:
                return "error (a Lua table)"
        return str(value)


def _cause(value: Any) -> BaseException | None:
    return value if isinstance(value, BaseException) else None
