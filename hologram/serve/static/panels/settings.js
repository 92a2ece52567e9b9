// The settings editor (spec 001, WebUI 配置编辑): a sidebar of namespaces (core.<section>,
// plugin.<plugin>), the keys of the chosen one with an input of their type, secrets never
// shown (only whether they are set, and a field to set them), and a form for any key by
// name. The server refuses what it cannot store, an unknown key naming the closest that
// exist: its message is shown as it comes. Each stored change arrives back as a
// config_changed event, which updates the row and is listed below the table.
import { $, call } from "../api.js";

function say(text, error = false) {
  $("settings-message").className = error ? "error" : "";
  $("settings-message").textContent = text;
}

async function store(body) {
  try {
    const stored = await call("PUT", "/settings", body);
    const shown = stored.secret ? "(secret, set)" : JSON.stringify(stored.value);
    say(`${stored.key} = ${shown}` + (stored.warning ? ` (${stored.warning})` : ""));
    return stored;
  } catch (err) {
    say(err.message, true);
    return null;
  }
}

function text(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function editor(s) {
  const input = document.createElement("input");
  input.dataset.type = s.type;
  if (s.type === "bool") {
    input.type = "checkbox";
    input.checked = s.value === true;
  } else if (s.secret) {
    input.type = "password";
    input.autocomplete = "off";
    input.placeholder = s.has_value ? "set; type to replace" : "not set";
  } else {
    input.type = "text";
    input.value = text(s.value);
  }
  return input;
}

function row(body, s) {
  const tr = body.insertRow();
  tr.dataset.key = s.key;
  tr.insertCell().textContent = s.key.slice(s.namespace.length + 1) || s.key;
  const input = editor(s);
  tr.insertCell().appendChild(input);
  const save = document.createElement("button");
  save.textContent = s.secret ? "Set" : "Save";
  save.addEventListener("click", async () => {
    const stored = await store(s.type === "bool"
      ? { key: s.key, value: input.checked }
      : { key: s.key, text: input.value });
    if (stored && s.secret) { input.value = ""; input.placeholder = "set; type to replace"; }
  });
  tr.insertCell().appendChild(save);
  const type = tr.insertCell();
  type.className = "type";
  type.textContent = s.secret ? `secret ${s.has_value ? "(set)" : "(not set)"}` : s.type;
  const source = tr.insertCell();
  source.className = "source";
  source.textContent = s.source;
  const doc = tr.insertCell(); doc.textContent = s.doc; doc.className = "doc";
  tr.title = s.key;
}

function sidebar(namespaces, prefix) {
  const nav = $("namespaces");
  nav.replaceChildren(...namespaces.map((ns) => {
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = "#";
    link.dataset.namespace = ns.name;
    link.textContent = `${ns.name} (${ns.keys})`;
    if (prefix === `${ns.name}.`) link.className = "chosen";
    link.addEventListener("click", (e) => {
      e.preventDefault();
      $("prefix").value = `${ns.name}.`;
      listSettings();
    });
    item.appendChild(link);
    return item;
  }));
}

export async function listSettings() {
  const prefix = $("prefix").value;
  const { settings, namespaces } = await call("GET", `/settings?prefix=${encodeURIComponent(prefix)}`);
  sidebar(namespaces, prefix);
  const body = $("settings").tBodies[0];
  body.replaceChildren();
  for (const s of settings) row(body, s);
}

export function mountSettings() {
  $("filter").addEventListener("submit", (e) => {
    e.preventDefault();
    listSettings().catch((err) => say(err.message, true));
  });
  $("setting-any").addEventListener("submit", (e) => {
    e.preventDefault();
    store({ key: $("any-key").value.trim(), text: $("any-value").value });
  });
}

export function onSettingsEvent(kind, event) {
  if (kind !== "config_changed") return;
  const { key, value } = event.payload;
  const item = document.createElement("li");
  item.dataset.key = key;
  item.textContent = `config_changed ${key} = ${text(value)}`;
  const list = $("settings-changes");
  list.appendChild(item);
  while (list.children.length > 20) list.removeChild(list.firstChild);
  const tr = document.querySelector(`#settings tr[data-key="${CSS.escape(key)}"]`);
  if (!tr) return;
  const input = tr.querySelector("input");
  if (input.type === "checkbox") input.checked = value === true;
  else if (input.type !== "password" && document.activeElement !== input) input.value = text(value);
  tr.classList.add("changed");
}
