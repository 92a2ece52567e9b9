// The scheduler's timeline, folded from its trace events (`scheduler`) and the reply's
// stream (`agent_output_delta`), and drawn as lanes: the notebook's widget and the service
// page both use this file. An event is {type, timestamp, payload}, as the bus publishes it.
import { svg, html, tooltip, span, zoomAxis } from "./common.js";

export const LANES = ["queued", "L1", "L2", "L3", "L4"];
export const PALETTE = ["#8da0b3", "#5b9bd5", "#70ad47", "#ed7d31", "#c00000"];
const LANE_H = 34, LEFT = 64, TOP = 24, AXIS_H = 22;

const levelName = (level) => LANES[level] ?? `L${level}`;

export class Timeline {
  constructor() {
    this.runs = []; // {task, level, start, end, ended}
    this.marks = []; // {action, task, at, level, reason}
    this.inputs = new Map(); // task -> {task, level, text, channel, origin, notes, stream}
    this.stack = [];
    this.running = null;
    this.first = null;
    this.last = 0;
    this.clockOffset = null; // scheduler time minus bus timestamp, to place stream events
  }

  input(task) {
    if (!this.inputs.has(task)) {
      this.inputs.set(task, { task, level: 0, text: "", channel: "", origin: "", notes: [],
        stream: null, effective: 0 });
    }
    return this.inputs.get(task);
  }

  apply(event) {
    if (event.type === "scheduler") this.decide(event.payload, event.timestamp);
    else if (event.type === "agent_output_delta") this.stream(event.payload, event.timestamp);
  }

  seen(at) {
    this.first = this.first === null ? at : Math.min(this.first, at);
    this.last = Math.max(this.last, at);
  }

  decide(p, timestamp) {
    const at = Number(p.at), task = Number(p.task);
    if (timestamp !== undefined) this.clockOffset = at - timestamp;
    this.seen(at);
    const input = this.input(task);
    if (p.level !== undefined) input.level = Number(p.level);
    if (p.effective !== undefined) input.effective = Number(p.effective);
    if (p.text) input.text = p.text;
    if (p.channel) input.channel = p.channel;
    if (p.origin) input.origin = p.origin;
    const handler = this[`on_${p.action}`];
    if (handler) handler.call(this, p, input, at);
  }

  open(input, at, action) {
    this.runs.push({ task: input.task, level: input.level, start: at, end: null, ended: "" });
    this.running = input.task;
    if (action === "resume") this.stack = this.stack.filter((t) => t !== input.task);
  }

  close(task, at, why) {
    for (let i = this.runs.length - 1; i >= 0; i--) {
      const run = this.runs[i];
      if (run.task === task && run.end === null) { run.end = at; run.ended = why; break; }
    }
    if (this.running === task) this.running = null;
  }

  mark(action, input, at, reason) {
    this.marks.push({ action, task: input.task, at, level: input.level, reason });
    input.notes.push(`${action}: ${reason}`);
  }

  on_enqueue(p, input, at) {
    input.queuedAt = at;
    const from = p.origin ? ` from ${p.origin}` : "";
    input.notes.push(`arrived at level ${levelName(input.level)}${from}`);
  }

  on_start(p, input, at) {
    this.open(input, at, "start");
    const waited = input.queuedAt === undefined ? "" : ` after ${span(at - input.queuedAt)} waiting`;
    input.notes.push(p.short_circuit
      ? "short-circuited: a stop covered it while it waited, so it never reached the model"
      : `started${waited}`);
  }

  on_resume(p, input, at) {
    const since = input.preemptedAt === undefined ? "" : ` after ${span(at - input.preemptedAt)}`;
    this.open(input, at, "resume");
    this.mark("resume", input, at, `the interrupt above it ended; back from the stack${since}`);
  }

  on_preempt(p, input, at) {
    this.close(input.task, at, "preempt");
    this.stack.push(input.task);
    input.preemptedAt = at;
    const by = this.input(Number(p.by));
    const reason = `#${p.by} (${levelName(by.level)}) outranks it (effective ` +
      `${levelName(input.effective)}); stack depth ${p.depth}`;
    this.mark("preempt", input, at, reason);
  }

  on_finish(p, input, at) { this.close(input.task, at, "finish"); }

  on_stop(p, input, at) {
    this.close(input.task, at, "stop");
    const budget = (p.budget ?? []).length;
    this.mark("stop", input, at, `a stop was asked; ${budget} waiting input(s) short-circuited with it`);
  }

  on_clamp(p, input) { input.notes.push(`a plugin asked L${p.asked}; given L${p.given}`); }

  on_offload(p, input) {
    input.notes.push(p.answered ? "answered by the triage assistant while the agent was busy"
      : "the triage assistant sent a busy note");
  }

  stream(p, timestamp) {
    if (p.input_id === undefined || p.input_id === null || p.reasoning) return;
    const at = this.clockOffset === null ? this.last : timestamp + this.clockOffset;
    const input = this.input(Number(p.input_id));
    const since = p.since === undefined ? at : p.since + (this.clockOffset ?? 0);
    if (!input.stream || p.restart) input.stream = { start: since, end: at, chars: 0 };
    input.stream.chars += p.chars ?? (p.text ?? "").length;
    input.stream.end = at;
    this.seen(at);
  }
}

function describe(tl, task, run) {
  const input = tl.input(task);
  const lines = [`#${task} · ${levelName(input.level)}${input.channel ? ` · ${input.channel}` : ""}`];
  if (input.text) lines.push(["text", input.text]);
  if (run) lines.push(["ran", `${span((run.end ?? tl.last) - run.start)}${run.end === null ? " (running)" : ""}`]);
  if (input.stream) lines.push(["reply", `${input.stream.chars} characters streamed`]);
  for (const note of input.notes) lines.push(["·", note]);
  return lines;
}

function drawRuns(g, tl, x, tip) {
  for (const run of tl.runs) {
    const y = TOP + (LANES.length - 1 - run.level) * LANE_H + 4;
    const end = run.end ?? tl.last;
    const bar = svg("g", { class: "run", "data-task": run.task, "data-level": run.level,
      "data-ended": run.ended || "running" }, g);
    svg("rect", { x: x(run.start), y, width: Math.max(2, x(end) - x(run.start)),
      height: LANE_H - 12, rx: 3, fill: PALETTE[run.level] }, bar);
    const label = tl.input(run.task).text || `#${run.task}`;
    svg("text", { x: x(run.start) + 3, y: y + 15, fill: "white", class: "run-label" }, bar)
      .textContent = `#${run.task} ${label}`.slice(0, Math.max(0, (x(end) - x(run.start)) / 6.5));
    bar.addEventListener("mousemove", (e) => tip.show(e, describe(tl, run.task, run)));
    bar.addEventListener("mouseleave", () => tip.hide());
  }
  for (const input of tl.inputs.values()) {
    if (!input.stream) continue;
    const y = TOP + (LANES.length - 1 - input.level) * LANE_H + LANE_H - 9;
    const s = input.stream;
    svg("rect", { class: "stream", "data-task": input.task, "data-chars": s.chars, x: x(s.start),
      y, width: Math.max(2, x(s.end) - x(s.start)), height: 4, fill: "#222", opacity: 0.55 }, g);
  }
}

function drawMarks(g, tl, x, tip) {
  const glyphs = { preempt: "▼", resume: "▲", stop: "■" };
  for (const m of tl.marks) {
    const y = TOP + (LANES.length - 1 - m.level) * LANE_H;
    const mark = svg("text", { class: "mark", "data-mark": m.action, "data-task": m.task,
      x: x(m.at) - 4, y: y + 2, fill: "#333" }, g);
    mark.textContent = glyphs[m.action];
    mark.addEventListener("mousemove", (e) => tip.show(e, [`#${m.task} ${m.action}`, m.reason]));
    mark.addEventListener("mouseleave", () => tip.hide());
  }
}

function drawAxis(g, from, to, x, y) {
  const step = niceStep((to - from) / 6);
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) {
    svg("line", { x1: x(t), x2: x(t), y1: TOP - 4, y2: y, stroke: "#0001" }, g);
    svg("text", { class: "tick", x: x(t) + 2, y: y + 12, fill: "#667" }, g)
      .textContent = `+${span(t - (g.dataset.origin ?? from))}`;
  }
}

function niceStep(raw) {
  const power = 10 ** Math.floor(Math.log10(Math.max(raw, 1e-3)));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
}

// Draws `tl` into `root`; the axis zooms with the wheel and pans with a drag.
export function mountTimeline(root, width = 760) {
  const tip = tooltip(root);
  const height = TOP + LANE_H * LANES.length + AXIS_H + 16;
  const picture = svg("svg", { class: "hologram-scheduler", width, height, "font-size": 11,
    viewBox: `0 0 ${width} ${height}`, "font-family": "sans-serif" }, root);
  let tl = new Timeline();
  const full = () => {
    const origin = tl.first ?? 0;
    return [origin, Math.max(tl.last, origin + 1e-3)];
  };
  const draw = (from, to) => {
    picture.replaceChildren();
    const scale = (width - LEFT - 16) / (to - from);
    const x = (t) => LEFT + (t - from) * scale;
    for (const [lane, name] of LANES.entries()) {
      const y = TOP + (LANES.length - 1 - lane) * LANE_H;
      const g = svg("g", { class: "lane", "data-lane": name }, picture);
      svg("rect", { x: LEFT, y, width: width - LEFT - 16, height: LANE_H - 4, fill: "#f7f7f7" }, g);
      svg("text", { x: 6, y: y + LANE_H / 2 + 2 }, g).textContent = name;
    }
    const clip = svg("svg", { x: LEFT, y: 0, width: width - LEFT - 16, height,
      viewBox: `${LEFT} 0 ${width - LEFT - 16} ${height}`, overflow: "hidden" }, picture);
    const axis = svg("g", { class: "axis", "data-origin": full()[0] }, clip);
    drawAxis(axis, from, to, x, TOP + LANE_H * LANES.length);
    drawRuns(svg("g", {}, clip), tl, x, tip);
    drawMarks(svg("g", {}, clip), tl, x, tip);
    const stack = tl.stack.map((t) => `#${t}`).join(" ← ") || "empty";
    const running = tl.running === null ? "idle" : `#${tl.running}`;
    svg("text", { class: "stack", x: LEFT, y: height - 4 }, picture).textContent =
      `running: ${running} · interrupt stack (bottom → top): ${stack} · ${span(to - from)} shown` +
      (zoom.zoomed() ? " (double-click: all)" : " (wheel: zoom)");
  };
  const zoom = zoomAxis(picture, full, draw, LEFT, width - 16);
  return {
    show(events) {
      tl = new Timeline();
      for (const event of events) tl.apply(event);
      draw(...zoom.current());
      return tl;
    },
    add(event) {
      tl.apply(event);
      draw(...zoom.current());
    },
    timeline: () => tl,
  };
}
