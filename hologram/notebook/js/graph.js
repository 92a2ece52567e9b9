// The graph widget: entities where `positions` puts them; the wheel zooms, a drag on the
// background pans, a drag on an entity moves it (its place goes back to the kernel), a
// click on an entity asks the kernel for its neighbours; hovering a fact shows its
// sentence, confidence and validity; the "as of" slider greys what was closed by then.
import { svg, html, tooltip } from "./common.js";

const WIDTH = 720, HEIGHT = 460;
const NODE = "#8fb3d9", LIT = "#f0a030", EDGE = "#666", CLOSED = "#aaa";
const date = (t) => new Date(t * 1000).toLocaleString();
const radius = (mentions) => 6 + 4 * Math.log1p(mentions);

function stateAt(fact, asof) {
  if (fact.valid_at > asof) return "future";
  if (fact.invalid_at !== null && fact.invalid_at <= asof) return "closed";
  return "current";
}

function describeFact(f) {
  const lines = [`${f.source} —${f.relation}→ ${f.target}`];
  if (f.sentence) lines.push(["sentence", f.sentence]);
  lines.push(["confidence", f.confidence.toFixed(2)]);
  lines.push(["valid", `${date(f.valid_at)} – ${f.invalid_at === null ? "now" : date(f.invalid_at)}`]);
  if (f.closed_reason) lines.push(["closed", f.closed_reason]);
  for (const m of f.media) lines.push(["media", m.name]);
  return lines;
}

// Parallel facts between one pair bend apart, so each can be pointed at.
function bends(facts) {
  const seen = new Map();
  return facts.map((f) => {
    const key = [f.source, f.target].sort().join("\u0000");
    const n = seen.get(key) ?? 0;
    seen.set(key, n + 1);
    return n === 0 ? 0 : (n % 2 ? 1 : -1) * Math.ceil(n / 2) * 26;
  });
}

function edgeGeometry(a, b, bend) {
  const mx = (a[0] + b[0]) / 2, my = (a[1] + b[1]) / 2;
  const dx = b[0] - a[0], dy = b[1] - a[1], len = Math.hypot(dx, dy) || 1;
  const cx = mx - (dy / len) * bend, cy = my + (dx / len) * bend;
  const labelX = (a[0] + 2 * cx + b[0]) / 4, labelY = (a[1] + 2 * cy + b[1]) / 4;
  return { d: `M${a[0]},${a[1]} Q${cx},${cy} ${b[0]},${b[1]}`, labelX, labelY };
}

function drawFacts(layer, data, pos, tip) {
  const bent = bends(data.facts);
  return data.facts.map((f, i) => {
    const g = svg("g", { class: "fact", "data-fact": f.id,
      "data-current": f.invalid_at === null ? 1 : 0 }, layer);
    const path = svg("path", { fill: "none", "stroke-width": 1.5 }, g);
    const hit = svg("path", { fill: "none", stroke: "transparent", "stroke-width": 10 }, g);
    const label = svg("text", { "font-size": 10, "text-anchor": "middle", class: "relation" }, g);
    label.textContent = f.relation;
    const thumbs = f.media.filter((m) => m.src).map((m) => svg("image",
      { class: "thumb", href: m.src, width: 34, height: 34, "data-block": m.id }, g));
    const place = () => {
      const geo = edgeGeometry(pos[f.source], pos[f.target], bent[i]);
      path.setAttribute("d", geo.d);
      hit.setAttribute("d", geo.d);
      label.setAttribute("x", geo.labelX);
      label.setAttribute("y", geo.labelY - 4);
      thumbs.forEach((t, k) => {
        t.setAttribute("x", geo.labelX - 17 + k * 38);
        t.setAttribute("y", geo.labelY + 2);
      });
    };
    place();
    g.addEventListener("mousemove", (e) => tip.show(e, describeFact(f)));
    g.addEventListener("mouseleave", () => tip.hide());
    return { fact: f, g, path, label, place };
  });
}

function drawNodes(layer, data, pos, tip) {
  return data.nodes.map((n) => {
    const g = svg("g", { class: "entity", "data-entity": n.name, "data-mentions": n.mentions,
      "data-highlighted": n.highlighted ? 1 : 0,
      "data-expanded": data.expanded.includes(n.name) ? 1 : 0 }, layer);
    const r = radius(n.mentions);
    const circle = svg("circle", { r, fill: n.highlighted ? LIT : NODE, stroke: "#345",
      "stroke-width": n.name === data.focus ? 2.5 : 1 }, g);
    const label = svg("text", { "font-size": 11, "text-anchor": "middle" }, g);
    label.textContent = n.name;
    const place = () => {
      const [x, y] = pos[n.name];
      circle.setAttribute("cx", x);
      circle.setAttribute("cy", y);
      label.setAttribute("x", x);
      label.setAttribute("y", y + r + 11);
    };
    place();
    g.addEventListener("mousemove", (e) => tip.show(e, [n.name, ["mentions", n.mentions],
      ...(n.highlighted ? [["", "touched by the last recall"]] : []),
      ["", "drag to move · click to open its neighbours"]]));
    g.addEventListener("mouseleave", () => tip.hide());
    return { node: n, g, place };
  });
}

// Pan and zoom of the whole picture, drag and click of an entity.
function interact(picture, viewport, nodes, facts, pos, model) {
  let view = { x: 0, y: 0, k: 1 };
  const apply = () => viewport.setAttribute("transform", `translate(${view.x},${view.y}) scale(${view.k})`);
  const toLocal = (e) => {
    const box = picture.getBoundingClientRect();
    const sx = ((e.clientX - box.left) * WIDTH) / box.width, sy = ((e.clientY - box.top) * HEIGHT) / box.height;
    return [sx, sy];
  };
  picture.addEventListener("wheel", (e) => {
    e.preventDefault();
    const [sx, sy] = toLocal(e);
    const k = Math.min(6, Math.max(0.25, view.k * (e.deltaY < 0 ? 1.2 : 1 / 1.2)));
    view = { k, x: sx - ((sx - view.x) * k) / view.k, y: sy - ((sy - view.y) * k) / view.k };
    apply();
    picture.dataset.zoom = k.toFixed(3);
  }, { passive: false });
  let drag = null;
  for (const item of nodes) {
    item.g.addEventListener("pointerdown", (e) => {
      e.stopPropagation();
      item.g.setPointerCapture(e.pointerId);
      drag = { item, start: toLocal(e), from: [...pos[item.node.name]], moved: false };
    });
  }
  picture.addEventListener("pointerdown", (e) => {
    drag = { pan: true, start: toLocal(e), from: [view.x, view.y] };
  });
  picture.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const [sx, sy] = toLocal(e);
    const dx = sx - drag.start[0], dy = sy - drag.start[1];
    if (drag.pan) {
      view = { ...view, x: drag.from[0] + dx, y: drag.from[1] + dy };
      apply();
      return;
    }
    if (Math.hypot(dx, dy) > 4) drag.moved = true;
    if (!drag.moved) return;
    const name = drag.item.node.name;
    pos[name] = [drag.from[0] + dx / view.k, drag.from[1] + dy / view.k];
    drag.item.place();
    for (const f of facts) if (f.fact.source === name || f.fact.target === name) f.place();
  });
  picture.addEventListener("pointerup", () => {
    if (drag && drag.item) {
      const name = drag.item.node.name;
      if (drag.moved) {
        model.set("positions", { ...model.get("positions"), [name]: pos[name].map((v) => Math.round(v * 10) / 10) });
        model.save_changes();
      } else {
        drag.item.g.dataset.opening = "1";
        model.send({ expand: name });
      }
    }
    drag = null;
  });
}

function asOfSlider(parent, data, facts) {
  const times = data.facts.flatMap((f) => [f.valid_at, f.invalid_at]).filter((t) => t !== null);
  const first = Math.min(...times, data.now), last = Math.max(...times, data.now);
  const label = html("label", {}, "as of ", parent);
  // In thousandths of the span, so its right end is exactly "now".
  const slider = html("input", { type: "range", min: 0, max: 1000, step: 1, value: 1000,
    "data-testid": "as-of" }, null, label);
  const shown = html("span", { class: "hg-asof" }, "now", label);
  const apply = () => {
    const share = Number(slider.value) / 1000;
    const asof = share >= 1 ? Infinity : first + (last - first) * share;
    shown.textContent = share >= 1 ? "now" : date(asof);
    for (const f of facts) {
      const state = stateAt(f.fact, asof);
      f.g.dataset.state = state;
      const colour = state === "current" ? EDGE : CLOSED;
      f.path.setAttribute("stroke", colour);
      f.path.setAttribute("stroke-dasharray", state === "current" ? "" : "5,4");
      f.label.setAttribute("fill", colour);
    }
  };
  slider.addEventListener("input", apply);
  apply();
}

export function drawGraph(root, model) {
  root.replaceChildren();
  const data = model.get("data");
  if (!data.nodes) return;
  if (data.nodes.length === 0) {
    html("div", { class: "hg-muted" }, "nothing in graph memory matches", root);
    return;
  }
  const tip = tooltip(root);
  const controls = html("div", { class: "hg-controls" }, null, root);
  const picture = svg("svg", { class: "hologram-graph", width: WIDTH, height: HEIGHT,
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`, "font-family": "sans-serif", "data-focus": data.focus,
    "data-nodes": data.nodes.length, "data-facts": data.facts.length }, root);
  svg("rect", { width: WIDTH, height: HEIGHT, fill: "#fcfcfe", class: "background" }, picture);
  const viewport = svg("g", { class: "viewport" }, picture);
  const pos = Object.fromEntries(Object.entries(model.get("positions")).map(([k, v]) => [k, [...v]]));
  const facts = drawFacts(svg("g", { class: "facts" }, viewport), data, pos, tip);
  const nodes = drawNodes(svg("g", { class: "entities" }, viewport), data, pos, tip);
  asOfSlider(controls, data, facts);
  html("span", { class: "hg-muted" }, "wheel: zoom · drag: pan or move · click: open", controls);
  interact(picture, viewport, nodes, facts, pos, model);
}

export default {
  render({ model, el }) {
    const root = html("div", { class: "hg-widget hg-graph" }, null, el);
    const draw = () => drawGraph(root, model);
    draw();
    model.on("change:data", draw);
    return () => model.off("change:data", draw);
  },
};
