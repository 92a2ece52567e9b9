// The Hologram page: chat, the live event stream, the scheduler, agentcli's terminals, the MCP
// servers, settings. Everything comes from /api/v1; the event stream is read with fetch so it
// can carry the bearer token. The terminals panel is built from terminal_output events alone
// (agentcli owns the terminals; a page opened later sees them from then on).
"use strict";

const API = "/api/v1";
const $ = (id) => document.getElementById(id);
const MAX_EVENTS = 200;
let lastEventId = null;
const pending = new Map(); // input id -> its chat line
const early = new Map(); // input id -> [text, class] of a reply that beat its acknowledgement
const typing = new Map(); // input id -> {item, round} of the reply being typed as it streams

function token() { return sessionStorage.getItem("hologram-token") || ""; }

async function call(method, path, body) {
  const headers = {};
  if (token()) headers.authorization = `Bearer ${token()}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(API + path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 401) $("token-box").hidden = false;
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

function line(list, text, cls) {
  const item = document.createElement("li");
  item.textContent = text;
  if (cls) item.className = cls;
  list.appendChild(item);
  list.scrollTop = list.scrollHeight;
  return item;
}

// ---- chat ----------------------------------------------------------------------------------

$("chat").addEventListener("submit", async (e) => {
  e.preventDefault();
  const text = $("text").value.trim();
  if (!text) return;
  $("text").value = "";
  if (text === "/stop") return stop();
  const level = $("level").value;
  const you = line($("messages"), `you: ${text}`, "you");
  try {
    const path = level === "queued" ? "/input" : "/interrupt";
    const ack = await call("POST", path, { text, level });
    you.dataset.input = ack.id;
    pending.set(ack.id, you);
    if (early.has(ack.id)) settle(ack.id, ...early.get(ack.id));
  } catch (err) {
    line($("messages"), `! ${err.message}`, "error");
  }
});

async function stop() {
  const { stopped } = await call("POST", "/stop");
  for (const id of stopped) settle(id, "(stopped)", "stopped");
}
$("stop").addEventListener("click", stop);

function settle(id, text, cls) {
  if (!pending.has(id)) {
    early.set(id, [text, cls]);
    return;
  }
  early.delete(id);
  pending.delete(id);
  // The streamed line becomes the reply (its text now the whole, final one).
  const typed = typing.get(id);
  typing.delete(id);
  const reply = typed ? typed.item : line($("messages"), "", cls);
  reply.textContent = text;
  reply.className = cls;
  reply.dataset.input = id;
  reply.dataset.testid = "reply";
}

// A piece of a reply as the model streams it: typed into the reply's line as it comes.
function typeOut(p) {
  if (p.reasoning || p.input_id == null) return;
  let typed = typing.get(p.input_id);
  if (!typed || typed.round !== p.round || p.restart) {
    if (typed && !p.restart) typed.item.className = "agent earlier";
    const item = typed && p.restart ? typed.item : line($("messages"), "hologram: ", "agent typing");
    if (p.restart) item.textContent = "hologram: ";
    item.dataset.testid = "typing";
    typed = { item, round: p.round };
    typing.set(p.input_id, typed);
  }
  typed.item.textContent += p.text;
}

// ---- events --------------------------------------------------------------------------------

function onEvent(kind, event) {
  if (event.seq !== undefined) lastEventId = event.seq;
  if (kind === "agent_output_delta") return typeOut(event.payload);
  const list = $("events");
  line(list, `${event.seq ?? ""} ${kind} ${JSON.stringify(event.payload ?? event).slice(0, 160)}`)
    .dataset.type = kind;
  while (list.children.length > MAX_EVENTS) list.removeChild(list.firstChild);
  if (kind === "agent_output" && event.input != null) {
    const p = event.payload;
    if (p.ended_by === "stopped") settle(event.input, "(stopped)", "stopped");
    else settle(event.input, `hologram: ${p.text}`, "agent");
  }
  if (kind === "scheduler" || kind === "turn_finished") refreshStatus();
  if (kind === "terminal_output") onTerminal(event.payload);
  if (kind === "plugin_status" && event.payload.plugin === "mcp") {
    showMcp(event.payload.status, event.payload.message);
  }
}

// ---- terminals (from terminal_output events) ----------------------------------------------

const TERMINAL_KEPT = 8000;
const terminals = new Map(); // id -> {box, head, pre}

function onTerminal(p) {
  if (p.event === "note") {
    line($("terminal-notes"), `hologram: ${p.data}`).dataset.testid = "terminal-note";
    return;
  }
  let t = terminals.get(p.terminal);
  if (!t) {
    const empty = $("terminals").querySelector(".empty");
    if (empty) empty.remove();
    const box = document.createElement("div");
    box.className = "terminal";
    box.dataset.terminal = p.terminal;
    const head = document.createElement("div");
    const pre = document.createElement("pre");
    box.append(head, pre);
    $("terminals").appendChild(box);
    t = { box, head, pre, name: p.name };
    terminals.set(p.terminal, t);
  }
  if (p.event === "output") {
    t.pre.textContent = (t.pre.textContent + p.data).slice(-TERMINAL_KEPT);
    t.pre.scrollTop = t.pre.scrollHeight;
  }
  let state = p.running ? "running" : (p.event === "timeout" ? "closed (idle)" : p.event);
  if (!p.running && p.status !== undefined && p.status !== null) state += `, status ${p.status}`;
  t.head.textContent = `${p.terminal} ${t.name} · ${state}`;
  t.box.dataset.running = String(p.running);
  t.box.classList.toggle("ended", !p.running);
}

// ---- MCP servers (the mcp plugin's reports) ------------------------------------------------

function showMcp(status, message) {
  const body = $("mcp").tBodies[0];
  body.replaceChildren();
  for (const [name, s] of Object.entries((status && status.servers) || {})) {
    const row = body.insertRow();
    row.dataset.server = name;
    row.className = s.state;
    for (const text of [name, s.transport, s.state, String(s.restarts)]) row.insertCell().textContent = text;
    const tools = row.insertCell();
    tools.className = "tools";
    tools.textContent = s.tools.join(", ") || "–";
    if (s.error) tools.title = s.error;
  }
  const refused = Object.entries((status && status.refused) || {}).map(([n, why]) => `${n}: ${why}`);
  if (message || refused.length) {
    $("mcp-message").textContent = [message, ...refused.map((r) => `refused ${r}`)]
      .filter(Boolean).join(" · ");
  }
}

async function loadMcp() {
  try {
    const { plugins } = await call("GET", "/plugins");
    const mcp = plugins.find((p) => p.name === "mcp");
    if (!mcp || mcp.state !== "running") {
      $("mcp-message").textContent = "the mcp plugin is not running";
      return;
    }
    showMcp(mcp.status);
  } catch (err) { console.warn("plugins:", err.message); }
}

async function stream() {
  for (;;) {
    try {
      const headers = {};
      if (token()) headers.authorization = `Bearer ${token()}`;
      if (lastEventId !== null) headers["last-event-id"] = String(lastEventId);
      const response = await fetch(API + "/events", { headers });
      if (!response.ok) throw new Error(`events: ${response.status}`);
      $("link").textContent = "live"; $("link").className = "up";
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
          const fields = {};
          for (const row of frame.split("\n")) {
            if (row.startsWith(":")) continue;
            const at = row.indexOf(": ");
            if (at > 0) fields[row.slice(0, at)] = row.slice(at + 2);
          }
          if (fields.event && fields.data) onEvent(fields.event, JSON.parse(fields.data));
        }
      }
    } catch (err) {
      console.warn("event stream:", err.message);
    }
    $("link").textContent = "reconnecting…"; $("link").className = "down";
    await new Promise((r) => setTimeout(r, 1000));
  }
}

// ---- scheduler and status ------------------------------------------------------------------

let refreshing = null;
function refreshStatus() {
  if (refreshing) return;
  refreshing = setTimeout(async () => {
    refreshing = null;
    try {
      const status = await call("GET", "/status");
      const s = status.scheduler;
      $("running").textContent = s.running ?? "–";
      $("stack").textContent = s.stack.join(", ") || "–";
      $("queue").textContent = s.queue.join(", ") || "–";
      $("model").textContent = status.llm.offline
        ? "offline scripted model" : `model: ${status.llm.sources[0]?.source}`;
      if (status.llm.usage) showUsage(status.llm.usage);
    } catch (err) { console.warn("status:", err.message); }
  }, 100);
}

function showUsage(usage) {
  const body = $("usage").tBodies[0];
  body.replaceChildren();
  const rows = [["total", usage.total]];
  for (const group of ["by_source", "by_day", "by_channel"]) {
    for (const [name, tally] of Object.entries(usage[group])) rows.push([name, tally]);
  }
  for (const [name, t] of rows) {
    const row = body.insertRow();
    row.insertCell().textContent = name;
    row.insertCell().textContent = `${t.calls} calls`;
    row.insertCell().textContent = `${t.prompt_tokens} in (${t.cached_tokens} cached)`;
    row.insertCell().textContent = `${t.completion_tokens} out (${t.reasoning_tokens} thinking)`;
    row.insertCell().textContent = t.cost ? `$${t.cost.toFixed(4)}` : "";
  }
}

// ---- settings ------------------------------------------------------------------------------

async function listSettings() {
  const body = $("settings").tBodies[0];
  const { settings } = await call("GET", `/settings?prefix=${encodeURIComponent($("prefix").value)}`);
  body.replaceChildren();
  for (const s of settings) {
    const row = body.insertRow();
    row.dataset.key = s.key;
    row.insertCell().textContent = s.key;
    const input = document.createElement("input");
    input.value = typeof s.value === "string" ? s.value : JSON.stringify(s.value);
    input.type = s.secret ? "password" : "text";
    row.insertCell().appendChild(input);
    const save = document.createElement("button");
    save.textContent = "Save";
    save.addEventListener("click", async () => {
      try {
        const stored = await call("PUT", "/settings", { key: s.key, text: input.value });
        $("settings-message").className = "";
        $("settings-message").textContent = `${stored.key} = ${JSON.stringify(stored.value)}` +
          (stored.warning ? ` (${stored.warning})` : "");
      } catch (err) {
        $("settings-message").className = "error";
        $("settings-message").textContent = err.message;
      }
    });
    row.insertCell().appendChild(save);
    row.insertCell().textContent = s.source;
    const doc = row.insertCell(); doc.textContent = s.doc; doc.className = "doc";
  }
}
$("filter").addEventListener("submit", (e) => { e.preventDefault(); listSettings(); });
$("token").addEventListener("change", () => {
  sessionStorage.setItem("hologram-token", $("token").value);
  $("token-box").hidden = true;
  refreshStatus(); listSettings();
});

refreshStatus();
loadMcp();
listSettings().catch((err) => { $("settings-message").textContent = err.message; });
stream();
