// The plugin panel: every plugin with its health (state, restarts, last error), enable or
// disable it, reload it, upload a .hmap package and uninstall what was uploaded. The list is read again whenever a plugin
// event arrives, so a change made elsewhere (the agent's pluginmgr, the supervisor
// restarting a crashed plugin) shows here too.
import { $, call, upload } from "../api.js";

const EVENTS = new Set([
  "plugin_started", "plugin_stopped", "plugin_crashed", "plugin_restarting", "plugin_refused",
]);
let reading = null;

function say(text, error = false) {
  $("plugins-message").className = error ? "error" : "";
  $("plugins-message").textContent = text;
}

function button(label, action, name) {
  const b = document.createElement("button");
  b.textContent = label;
  b.dataset.action = action;
  b.addEventListener("click", async () => {
    b.disabled = true;
    const path = `/plugins/${encodeURIComponent(name)}`;
    try {
      if (action === "uninstall") {
        await call("DELETE", path);
        say(`${name} uninstalled`);
      } else {
        const row = await call("POST", `${path}/${action}`);
        say(`${row.name}: ${row.state}${row.error ? ` (${row.error})` : ""}`);
      }
    } catch (err) { say(`${name}: ${err.message}`, true); }
    await loadPlugins();
  });
  return b;
}

function show(plugins, refused) {
  const body = $("plugins").tBodies[0];
  body.replaceChildren();
  for (const p of plugins) {
    const row = body.insertRow();
    row.dataset.plugin = p.name;
    row.dataset.state = p.state;
    row.className = p.state;
    for (const text of [p.name, `${p.kind} · ${p.origin}`, p.state, String(p.restarts)]) {
      row.insertCell().textContent = text;
    }
    const error = row.insertCell();
    error.className = "error-text";
    error.textContent = p.error || "";
    const tools = row.insertCell();
    tools.className = "tools";
    tools.textContent = p.tools.join(", ") || "–";
    const actions = row.insertCell();
    const running = p.state === "running" || p.state === "restarting";
    actions.append(
      button(running ? "Disable" : "Enable", running ? "disable" : "enable", p.name),
      button("Reload", "reload", p.name),
    );
    // Only what was installed can be removed; built-in and shipped plugins stay.
    if (p.origin === "user") actions.append(button("Uninstall", "uninstall", p.name));
  }
  const refusals = Object.entries(refused || {});
  $("plugins-refused").replaceChildren(...refusals.map(([where, why]) => {
    const item = document.createElement("li");
    item.textContent = `${where}: ${why}`;
    return item;
  }));
}

export async function loadPlugins() {
  try {
    const { plugins, refused } = await call("GET", "/plugins");
    show(plugins, refused);
  } catch (err) { say(err.message, true); }
}

export function mountPlugins() {
  $("plugin-upload").addEventListener("submit", async (e) => {
    e.preventDefault();
    const file = $("plugin-file").files[0];
    if (!file) return say("choose a .hmap file first", true);
    const replace = $("plugin-replace").checked;
    try {
      const row = await upload(`/plugins${replace ? "?replace=true" : ""}`, file);
      say(`installed ${row.name} (${row.state}${row.started ? "" : ", not started"})`);
      $("plugin-file").value = "";
    } catch (err) { say(err.message, true); }
    await loadPlugins();
  });
}

export function onPluginsEvent(kind) {
  if (!EVENTS.has(kind) || reading) return;
  // A reload is a stop and a start: one read after both arrived is enough.
  reading = setTimeout(() => { reading = null; loadPlugins(); }, 100);
}
