// The context widget: the window's events ranked as a prune keeps them, each with its
// score against the current input as a bar; the top-k cut is a line the slider moves (a
// preview: the kernel's top_k is not changed); the last prune's archived events leave for
// the cold store below. Each row carries `keep_from`, the smallest top_k that keeps it.
import { html, span } from "./common.js";

function when(row) {
  const at = new Date(row.timestamp * 1000);
  return { text: `${span(row.age)} ago`, title: at.toLocaleString() };
}

function scoreBar(parent, row) {
  const cell = html("div", { class: "hg-score" }, null, parent);
  if (row.score === null || row.score === undefined) {
    html("div", { class: "hg-bar protected", style: "width:100%" }, null, cell);
    html("span", { class: "hg-score-text" }, row.protected ? "protected" : "not scored", cell);
    return;
  }
  const width = Math.max(0, Math.min(1, row.score)) * 100;
  html("div", { class: "hg-bar", style: `width:${width.toFixed(1)}%` }, null, cell);
  html("span", { class: "hg-score-text" }, row.score.toFixed(3), cell);
}

function eventRow(parent, row, extra = {}) {
  const item = html("div", { class: "candidate", "data-id": row.id, ...extra }, null, parent);
  const time = when(row);
  html("span", { class: "hg-when", title: time.title }, time.text, item);
  html("span", { class: "hg-source" }, row.channel && row.channel !== row.source
    ? `${row.source} · ${row.channel}` : row.source, item);
  const text = html("span", { class: "hg-text folded", title: "click to open" }, row.text, item);
  text.addEventListener("click", () => {
    text.classList.toggle("folded");
    item.dataset.open = text.classList.contains("folded") ? "0" : "1";
  });
  scoreBar(item, row);
  return item;
}

function drawRows(list, data, topK) {
  list.replaceChildren();
  const kept = data.rows.filter((r) => r.keep_from <= topK).length;
  let cutDrawn = false;
  const cut = () => {
    const gone = data.rows.length - kept;
    const line = html("div", { class: "cut", "data-top-k": topK, "data-after": kept,
      "data-testid": "top-k-cut" }, null, list);
    html("span", {}, gone === 0
      ? `top_k ${topK}: a prune now keeps all ${data.rows.length}`
      : `top_k ${topK}: a prune now keeps ${kept} of ${data.rows.length}; the ${gone} below ` +
        "would leave for the cold store", line);
    cutDrawn = true;
  };
  data.rows.forEach((row, index) => {
    if (index === kept && !cutDrawn) cut();
    const inside = row.keep_from <= topK;
    const fate = row.protected ? "protected" : inside ? "kept" : "cut";
    eventRow(list, row, { "data-fate": fate, "data-preview": inside ? "kept" : "cut",
      "data-score": row.score ?? "", "data-keep-from": row.keep_from });
  });
  if (!cutDrawn) cut();
}

function drawLeaving(parent, data) {
  parent.replaceChildren();
  if (!data.leaving || data.leaving.length === 0) return;
  const last = data.last_prune;
  const archived = data.leaving.filter((r) => r.fate === "archived").length;
  html("div", { class: "hg-leaving-head" },
    `the last prune (${last.before} → ${last.after}, for “${last.query.slice(0, 60)}”) took ` +
    `${data.leaving.length} out: ${archived} left for the cold store ❄`, parent);
  for (const row of data.leaving) eventRow(parent, row, { "data-fate": row.fate });
}

export function drawContext(root, model) {
  root.replaceChildren();
  const data = model.get("data");
  if (!data.rows) {
    html("div", { class: "hg-muted" }, "scoring the window…", root);
    return;
  }
  const head = html("div", { class: "hg-controls" }, null, root);
  html("span", { class: "hg-query" }, data.query
    ? `scores against the current input: “${data.query}”` : "no input in the window yet", head);
  const label = html("label", {}, "top_k ", head);
  const max = Math.max(data.size, data.top_k);
  const slider = html("input", { type: "range", min: 0, max, step: 1, "data-testid": "top-k",
    value: Math.min(model.get("preview_top_k"), max) }, null, label);
  const shown = html("span", { class: "hg-top-k" }, String(slider.value), label);
  html("span", { class: "hg-muted" },
    `(the window's own: ${data.top_k}; newest ${data.protected_recent} protected)`, head);
  const list = html("div", { class: "hg-rows hologram-prune" }, null, root);
  const leaving = html("div", { class: "hg-leaving" }, null, root);
  const redraw = () => {
    const k = Number(slider.value);
    shown.textContent = String(k);
    drawRows(list, data, k);
  };
  slider.addEventListener("input", () => {
    redraw();
    model.set("preview_top_k", Number(slider.value));
    model.save_changes();
  });
  redraw();
  drawLeaving(leaving, data);
}

export default {
  render({ model, el }) {
    const root = html("div", { class: "hg-widget hg-context" }, null, el);
    const draw = () => drawContext(root, model);
    draw();
    model.on("change:data", draw);
    return () => model.off("change:data", draw);
  },
};
