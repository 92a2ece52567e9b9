// The model source control: the sources in the order a call tries them (with their state),
// the one in use, and a switch to another from the next model call on.
import { $, call } from "../api.js";

const EVENTS = new Set([
  "provider_switched", "provider_unavailable", "provider_recovered", "provider_skipped",
]);

function show({ current, sources }) {
  $("llm-current").textContent = current ?? "none";
  const body = $("llm-sources").tBodies[0];
  body.replaceChildren();
  const choice = $("llm-choice");
  choice.replaceChildren();
  for (const s of sources) {
    const row = body.insertRow();
    row.dataset.source = s.source;
    if (s.source === current) row.className = "current";
    const label = s.offline ? `${s.adapter} (offline)` : s.adapter;
    for (const text of [s.source, label, s.state, String(s.failures)]) {
      row.insertCell().textContent = text;
    }
    const option = document.createElement("option");
    option.value = option.textContent = s.source;
    option.selected = s.source === current;
    choice.appendChild(option);
  }
}

function say(text, error = false) {
  $("llm-message").className = error ? "error" : "";
  $("llm-message").textContent = text;
}

export async function loadSources() {
  try { show(await call("GET", "/llm/sources")); } catch (err) { say(err.message, true); }
}

export function mountLlm() {
  $("llm-switch").addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const listing = await call("PUT", "/llm/source", { source: $("llm-choice").value });
      show(listing);
      say(`the next model call goes to ${listing.current}`);
    } catch (err) { say(err.message, true); }
  });
}

export function onLlmEvent(kind) {
  if (EVENTS.has(kind)) loadSources();
}
