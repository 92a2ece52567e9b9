// The usage panel: tokens and cost since boot, from /status (llm.usage): the total, then
// a titled group of rows per source, per day and per channel.
import { $ } from "../api.js";

const GROUPS = [["by_source", "by source"], ["by_day", "by day"], ["by_channel", "by channel"]];

export function showUsage(usage) {
  if (!usage) return;
  const body = $("usage").tBodies[0];
  body.replaceChildren();
  addRow(body, "total", "total", usage.total);
  for (const [group, title] of GROUPS) {
    const head = body.insertRow();
    head.className = "group";
    const cell = head.insertCell();
    cell.colSpan = 5;
    cell.textContent = title;
    for (const [name, tally] of Object.entries(usage[group])) addRow(body, group, name, tally);
  }
}

function addRow(body, group, name, t) {
  const row = body.insertRow();
  row.dataset.group = group;
  row.dataset.name = name;
  const cells = [
    ["name", name],
    ["calls", `${t.calls} calls`],
    ["prompt", `${t.prompt_tokens} in (${t.cached_tokens} cached)`],
    ["output", `${t.completion_tokens} out (${t.reasoning_tokens} thinking)`],
    // A call whose model the price table does not name has no cost, not a cost of 0.
    ["cost", t.calls > t.unpriced_calls ? `$${t.cost.toFixed(4)}` : "–"],
  ];
  for (const [kind, text] of cells) {
    const cell = row.insertCell();
    cell.className = kind;
    cell.textContent = text;
  }
}
