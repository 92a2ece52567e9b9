// The Hologram page: each panel is a module of its own (panels/); this file wires them to
// the event stream and starts them. Everything comes from /api/v1.
import { $, stream } from "./api.js";
import { loadConversation, mountChat, onChatEvent } from "./panels/chat.js";
import { onEventsEvent } from "./panels/events.js";
import { mountScheduler, onSchedulerEvent, refreshStatus } from "./panels/scheduler.js";
import { loadMcp, onMcpEvent } from "./panels/mcp.js";
import { listSettings, mountSettings, onSettingsEvent } from "./panels/settings.js";
import { loadPlugins, mountPlugins, onPluginsEvent } from "./panels/plugins.js";
import { loadSources, mountLlm, onLlmEvent } from "./panels/llm.js";
import { onTerminalEvent } from "./panels/terminals.js";

const panels = [
  onEventsEvent, onChatEvent, onSchedulerEvent, onTerminalEvent, onMcpEvent,
  onPluginsEvent, onLlmEvent, onSettingsEvent,
];

function onEvent(kind, event) {
  for (const panel of panels) panel(kind, event);
}

$("token").addEventListener("change", () => {
  sessionStorage.setItem("hologram-token", $("token").value);
  $("token-box").hidden = true;
  refreshStatus(); listSettings(); loadPlugins(); loadSources();
});

mountChat();
mountScheduler();
mountSettings();
mountPlugins();
mountLlm();
refreshStatus();
loadMcp();
loadPlugins();
loadSources();
listSettings().catch((err) => { $("settings-message").textContent = err.message; });
// The conversation first, so the replayed events find the inputs they answer on the page.
loadConversation()
  .catch((err) => console.warn("conversation:", err.message))
  .finally(() => stream(onEvent, 0));
