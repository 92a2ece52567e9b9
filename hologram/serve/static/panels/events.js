// The events panel: every bus event, newest last, the recent ones replayed when the page
// opens (the stream starts from the oldest event the service still holds).
import { $ } from "../api.js";

const MAX_EVENTS = 200;

function summary(kind, event) {
  const p = event.payload ?? event;
  if (kind === "scheduler") return `${p.action} #${p.task}${p.text ? ` “${p.text}”` : ""}`;
  if (kind === "agent_output") return `#${event.input ?? "–"} ${p.ended_by ?? ""}: ${p.text ?? ""}`;
  return JSON.stringify(p);
}

export function onEventsEvent(kind, event) {
  if (kind === "agent_output_delta") return; // a reply's pieces: the chat types them
  const list = $("events");
  const item = document.createElement("li");
  item.dataset.type = kind;
  const seq = document.createElement("span");
  seq.className = "seq";
  seq.textContent = event.seq ?? "";
  const type = document.createElement("span");
  type.className = "type";
  type.textContent = kind;
  const text = document.createElement("span");
  text.className = "what";
  text.textContent = summary(kind, event).slice(0, 200);
  item.append(seq, type, text);
  item.title = JSON.stringify(event.payload ?? event, null, 1).slice(0, 2000);
  list.appendChild(item);
  while (list.children.length > MAX_EVENTS) list.removeChild(list.firstChild);
  list.scrollTop = list.scrollHeight;
}
