// The scheduler panel: what runs, the stack and the queue (GET /status), and the same
// timeline the notebook's widget draws, fed by the stream's scheduler and reply events.
import { $, call } from "../api.js";
import { mountTimeline } from "../widgets/timeline.js";
import { showUsage } from "./usage.js";

let timeline = null;
let refreshing = null;

export function mountScheduler() {
  timeline = mountTimeline($("timeline"), 560);
  timeline.show([]);
}

export function refreshStatus() {
  if (refreshing) return;
  refreshing = setTimeout(async () => {
    refreshing = null;
    try {
      const status = await call("GET", "/status");
      const s = status.scheduler;
      $("running").textContent = s.running ?? "–";
      $("stack").textContent = s.stack.join(", ") || "–";
      $("queue").textContent = s.queue.join(", ") || "–";
      $("model").textContent = status.llm.offline
        ? "offline scripted model" : `model: ${status.llm.sources[0]?.source}`;
      showUsage(status.llm.usage);
    } catch (err) { console.warn("status:", err.message); }
  }, 100);
}

export function onSchedulerEvent(kind, event) {
  // A finished turn refreshes the status too: it moves the usage totals.
  if (kind === "turn_finished") return refreshStatus();
  if (kind !== "scheduler" && kind !== "agent_output_delta") return;
  timeline.add({ type: kind, timestamp: event.timestamp, payload: event.payload });
  if (kind === "scheduler") refreshStatus();
}
