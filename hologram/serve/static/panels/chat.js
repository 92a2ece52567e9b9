// The chat panel: it opens on the recent conversation (GET /conversation: the journal's
// inputs with their replies, and what the context window holds besides), then follows the
// replies of what is sent from here and of inputs still running when the page opened.
import { $, call, line } from "../api.js";

const pending = new Map(); // input id -> its chat line
const early = new Map(); // input id -> [text, class] of a reply that beat its acknowledgement
const settled = new Set(); // input ids whose reply is on the page
const typing = new Map(); // input id -> {item, round} of the reply being typed as it streams

function settle(id, text, cls) {
  if (settled.has(id)) return; // a replayed event of a reply already shown
  if (!pending.has(id)) {
    early.set(id, [text, cls]);
    return;
  }
  early.delete(id);
  pending.delete(id);
  settled.add(id);
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
  if (p.reasoning || p.input_id == null || settled.has(p.input_id)) return;
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

function said(id, you) {
  you.dataset.input = id;
  pending.set(id, you);
  if (early.has(id)) settle(id, ...early.get(id));
}

export async function loadConversation() {
  const { lines } = await call("GET", "/conversation?limit=50");
  const list = $("messages");
  for (const entry of lines) {
    if (entry.input === null) {
      const item = line(list, `${entry.source}: ${entry.text}`, "memory");
      item.title = "in the context window; no input of the journal said it";
      continue;
    }
    const you = line(list, `${entry.channel}: ${entry.text}`, "you");
    you.dataset.history = "1";
    if (!entry.in_window) you.title = "no longer in the context window";
    said(entry.input, you);
    if (entry.state === "done") settle(entry.input, `hologram: ${entry.reply ?? ""}`, "agent");
    else if (entry.state === "stopped" || entry.state === "failed") {
      settle(entry.input, `(${entry.state})`, "stopped");
    }
  }
  if (lines.length) line(list, "— earlier conversation above —", "divider");
}

async function stop() {
  const { stopped } = await call("POST", "/stop");
  for (const id of stopped) settle(id, "(stopped)", "stopped");
}

export function mountChat() {
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
      said(ack.id, you);
    } catch (err) {
      line($("messages"), `! ${err.message}`, "error");
    }
  });
  $("stop").addEventListener("click", stop);
}

export function onChatEvent(kind, event) {
  if (kind === "agent_output_delta") return typeOut(event.payload);
  if (kind !== "agent_output" || event.input == null) return;
  const p = event.payload;
  if (p.ended_by === "stopped") settle(event.input, "(stopped)", "stopped");
  else settle(event.input, `hologram: ${p.text}`, "agent");
}
