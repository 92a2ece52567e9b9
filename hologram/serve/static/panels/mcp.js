// The MCP servers panel: the mcp plugin's last report (GET /plugins when the page opens,
// then its plugin_status events).
import { $, call } from "../api.js";

function showMcp(status, message) {
  const body = $("mcp").tBodies[0];
  body.replaceChildren();
  for (const [name, s] of Object.entries((status && status.servers) || {})) {
    const row = body.insertRow();
    row.dataset.server = name;
    row.className = s.state;
    for (const text of [name, s.transport, s.state, String(s.restarts)]) row.insertCell().textContent = text;
    const tools = row.insertCell();
    tools.className = "tools";
    tools.textContent = s.tools.join(", ") || "–";
    if (s.error) tools.title = s.error;
  }
  const refused = Object.entries((status && status.refused) || {}).map(([n, why]) => `${n}: ${why}`);
  if (message || refused.length) {
    $("mcp-message").textContent = [message, ...refused.map((r) => `refused ${r}`)]
      .filter(Boolean).join(" · ");
  }
}

export async function loadMcp() {
  try {
    const { plugins } = await call("GET", "/plugins");
    const mcp = plugins.find((p) => p.name === "mcp");
    if (!mcp || mcp.state !== "running") {
      $("mcp-message").textContent = "the mcp plugin is not running";
      return;
    }
    showMcp(mcp.status);
  } catch (err) { console.warn("plugins:", err.message); }
}

export function onMcpEvent(kind, event) {
  if (kind === "plugin_status" && event.payload.plugin === "mcp") {
    showMcp(event.payload.status, event.payload.message);
  }
}
