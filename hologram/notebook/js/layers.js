// The dependency-layers widget: boxes and routes laid out in Python (layers_layout.py);
// hovering a module lights what it requires (orange) and what it provides (blue).
import { svg, html, tooltip } from "./common.js";

function drawModule(parent, m) {
  const { x, y, w, h } = m.box;
  const g = svg("g", { class: "module", "data-module": m.name, "data-status": m.status }, parent);
  svg("rect", { x, y, width: w, height: h, rx: 6, fill: m.fill, stroke: m.stroke,
    "stroke-width": 1.5 }, g);
  svg("text", { x: x + 8, y: y + 18, "font-size": 13, "font-weight": "bold" }, g)
    .textContent = m.name;
  svg("text", { x: x + 8, y: y + 34, "font-size": 11, fill: "#444", class: "boot-time" }, g)
    .textContent = m.detail;
  svg("rect", { x: x + 8, y: y + h - 11, width: w - 16, height: 5, fill: "#00000010" }, g);
  svg("rect", { class: "boot-bar", x: x + 8, y: y + h - 11, width: (w - 16) * m.share,
    height: 5, fill: m.stroke, "data-share": m.share.toFixed(4) }, g);
  return g;
}

export function drawLayers(root, data) {
  root.replaceChildren();
  const tip = tooltip(root);
  const picture = svg("svg", { class: "hologram-layers", width: data.width, height: data.height,
    viewBox: `0 0 ${data.width} ${data.height}`, "font-family": "sans-serif" }, root);
  for (const row of data.rows) {
    svg("text", { x: 14, y: row.y, "font-size": 12, fill: "#555" }, picture).textContent = row.label;
  }
  const edges = data.routes.map((r) => {
    const g = svg("g", { class: "edge", "data-facility": r.facility, "data-from": r.from,
      "data-to": r.to }, picture);
    svg("polyline", { points: r.points.map((p) => p.join(",")).join(" "), fill: "none",
      stroke: "#8899aa", "stroke-width": 1.2 }, g);
    g.addEventListener("mousemove", (e) => tip.show(e, [`${r.facility}`, `${r.from} → ${r.to}`]));
    g.addEventListener("mouseleave", () => tip.hide());
    return g;
  });
  const labels = data.labels.map((l) => {
    const text = svg("text", { class: l.shown ? "facility-label" : "facility-label hover-only",
      x: l.box.x + 2, y: l.box.y + 9, "font-size": 10, fill: "#556677",
      "data-facility": l.facility, "data-from": l.from }, picture);
    text.textContent = l.facility;
    return text;
  });
  const modules = data.modules.map((m) => [m, drawModule(picture, m)]);
  for (const [m, g] of modules) {
    g.addEventListener("mouseenter", (e) => {
      picture.classList.add("focus");
      const near = new Set([m.name]);
      for (const edge of edges) {
        const role = edge.dataset.to === m.name ? "requires"
          : edge.dataset.from === m.name ? "provides" : "";
        if (role) {
          edge.classList.add(role);
          near.add(role === "requires" ? edge.dataset.from : edge.dataset.to);
        }
      }
      for (const label of labels) label.classList.toggle("lit", near.has(label.dataset.from));
      for (const [other, og] of modules) og.classList.toggle("near", near.has(other.name));
      const lines = [["requires", m.requires.join(", ") || "nothing"],
        ["provides", m.provides.join(", ") || "nothing"], ["boot", m.detail]];
      if (m.error) lines.push(["error", m.error]);
      tip.show(e, [m.name, ...lines]);
    });
    g.addEventListener("mouseleave", () => {
      picture.classList.remove("focus");
      for (const edge of edges) edge.classList.remove("requires", "provides");
      for (const label of labels) label.classList.remove("lit");
      for (const [, og] of modules) og.classList.remove("near");
      tip.hide();
    });
  }
}

export default {
  render({ model, el }) {
    const root = html("div", { class: "hg-widget hg-layers" }, null, el);
    const draw = () => drawLayers(root, model.get("data"));
    draw();
    model.on("change:data", draw);
    return () => model.off("change:data", draw);
  },
};
