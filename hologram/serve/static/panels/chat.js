// The chat panel: it opens on the recent conversation (GET /conversation: the journal's
// inputs with their replies, and what the context window holds besides), then follows the
// replies of what is sent from here and of inputs still running when the page opened.
import { $, call, line, postForm } from "../api.js";

const pending = new Map(); // input id -> its chat line
const early = new Map(); // input id -> [text, class] of a reply that beat its acknowledgement
const settled = new Set(); // input ids whose reply is on the page
const typing = new Map(); // input id -> {item, round} of the reply being typed as it streams
let attached = []; // images picked or pasted, sent with the next message

// Thumbnails of what will be sent with the next message; a click takes one off again.
function showAttached() {
  const box = $("attached");
  box.replaceChildren();
  attached.forEach((file, index) => {
    const figure = document.createElement("figure");
    figure.title = `${file.name || "pasted image"} (click to remove)`;
    figure.dataset.testid = "attached-thumb";
    figure.appendChild(thumb(file));
    figure.addEventListener("click", () => {
      attached.splice(index, 1);
      showAttached();
    });
    box.appendChild(figure);
  });
}

function thumb(file) {
  const img = document.createElement("img");
  img.className = "thumb";
  img.alt = file.name || "image";
  img.src = URL.createObjectURL(file);
  return img;
}

function attach(files) {
  for (const file of files) if (file.type.startsWith("image/")) attached.push(file);
  showAttached();
}

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
    if (!text) {
      if (attached.length) line($("messages"), "! say something with the images", "error");
      return;
    }
    $("text").value = "";
    if (text === "/stop") return stop();
    const level = $("level").value;
    const images = attached;
    attached = [];
    showAttached();
    const you = line($("messages"), `you: ${text}`, "you");
    for (const file of images) {
      const img = you.appendChild(thumb(file));
      img.dataset.testid = "sent-thumb";
    }
    try {
      const path = level === "queued" ? "/input" : "/interrupt";
      let ack;
      if (images.length) {
        // A form carries the images' bytes as they are (base64 in JSON adds a third).
        const form = new FormData();
        form.append("text", text);
        form.append("level", level);
        for (const file of images) form.append("media", file, file.name || "pasted.png");
        ack = await postForm(path, form);
      } else {
        ack = await call("POST", path, { text, level });
      }
      said(ack.id, you);
    } catch (err) {
      line($("messages"), `! ${err.message}`, "error");
    }
  });
  $("attach").addEventListener("change", (e) => {
    attach(e.target.files);
    e.target.value = ""; // the same file may be picked again
  });
  $("text").addEventListener("paste", (e) => {
    const files = [...(e.clipboardData?.items ?? [])]
      .filter((i) => i.kind === "file" && i.type.startsWith("image/"))
      .map((i) => i.getAsFile())
      .filter(Boolean);
    if (files.length) attach(files);
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
