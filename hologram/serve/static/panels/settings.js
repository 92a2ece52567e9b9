// The settings panel: list settings by prefix, change one; a refused value says why.
import { $, call } from "../api.js";

export async function listSettings() {
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

export function mountSettings() {
  $("filter").addEventListener("submit", (e) => { e.preventDefault(); listSettings(); });
}
