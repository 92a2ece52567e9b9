// The usage panel: tokens and cost since boot, from /status (llm.usage).
import { $ } from "../api.js";

export function showUsage(usage) {
  if (!usage) return;
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
