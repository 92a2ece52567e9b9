// The terminals panel, built from terminal_output events alone: agentcli owns the terminals,
// so a page opened later sees them from then on.
import { $, line } from "../api.js";

const TERMINAL_KEPT = 8000;
const terminals = new Map(); // id -> {box, head, pre, name}

function terminal(p) {
  let t = terminals.get(p.terminal);
  if (t) return t;
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
  return t;
}

export function onTerminalEvent(kind, event) {
  if (kind !== "terminal_output") return;
  const p = event.payload;
  if (p.event === "note") {
    line($("terminal-notes"), `hologram: ${p.data}`).dataset.testid = "terminal-note";
    return;
  }
  const t = terminal(p);
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
