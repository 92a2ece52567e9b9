// What the widgets and the service page share: element builders, a tooltip, a time that
// reads like speech, and an SVG axis a person can zoom and pan.

export const SVG_NS = "http://www.w3.org/2000/svg";

export function svg(tag, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) node.setAttribute(key, String(value));
  }
  if (parent) parent.appendChild(node);
  return node;
}

export function html(tag, attrs = {}, text = null, parent = null) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null) continue;
    if (key === "class") node.className = value;
    else node.setAttribute(key, String(value));
  }
  if (text !== null) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

// A tooltip inside `host` (positioned), following the pointer. `lines`: strings, or
// [label, value] pairs shown as a small table.
export function tooltip(host) {
  const tip = html("div", { class: "hg-tip", "data-testid": "tooltip" }, null, host);
  tip.hidden = true;
  return {
    element: tip,
    show(event, lines) {
      tip.replaceChildren();
      for (const line of lines) {
        const row = html("div", { class: "hg-tip-line" }, null, tip);
        if (Array.isArray(line)) {
          html("b", {}, `${line[0]} `, row);
          html("span", {}, String(line[1]), row);
        } else {
          row.textContent = line;
        }
      }
      tip.hidden = false;
      // Beside the pointer, but inside the host: a notebook's output area clips the rest.
      const box = host.getBoundingClientRect();
      const x = event.clientX - box.left, y = event.clientY - box.top;
      const left = x + 14 + tip.offsetWidth > box.width ? x - 14 - tip.offsetWidth : x + 14;
      const top = y + 14 + tip.offsetHeight > box.height ? y - 14 - tip.offsetHeight : y + 14;
      tip.style.left = `${Math.max(left, 0)}px`;
      tip.style.top = `${Math.max(top, 0)}px`;
    },
    hide() {
      tip.hidden = true;
    },
  };
}

// "4 s", "12 min", "3 h", "2 days": how long a span of seconds is, as a person says it.
export function span(seconds) {
  const s = Math.abs(seconds);
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86400) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} days`;
}

// A horizontal axis that the wheel zooms around the pointer and a drag pans; a double
// click shows everything again. `onChange(from, to)` redraws; `full()` gives the whole span.
export function zoomAxis(target, full, onChange, left, right) {
  let view = null; // [from, to], or null: everything
  const current = () => view ?? full();
  const toTime = (clientX) => {
    const box = target.getBoundingClientRect();
    const [from, to] = current();
    const x = (clientX - box.left) * (target.viewBox.baseVal.width / box.width);
    return from + ((x - left) / (right - left)) * (to - from);
  };
  target.addEventListener("wheel", (event) => {
    event.preventDefault();
    const [from, to] = current();
    const at = toTime(event.clientX);
    const factor = event.deltaY < 0 ? 0.8 : 1.25;
    const [whole0, whole1] = full();
    const next0 = Math.max(whole0, at - (at - from) * factor);
    const next1 = Math.min(whole1, at + (to - at) * factor);
    view = next1 - next0 >= whole1 - whole0 ? null : [next0, next1];
    onChange(...current());
  }, { passive: false });
  let dragging = null;
  target.addEventListener("pointerdown", (event) => {
    if (view) dragging = { x: event.clientX, view: [...view] };
  });
  target.addEventListener("pointermove", (event) => {
    if (!dragging) return;
    const box = target.getBoundingClientRect();
    const [from, to] = dragging.view;
    const scale = (to - from) / ((right - left) * (box.width / target.viewBox.baseVal.width));
    const [whole0, whole1] = full();
    let shift = -(event.clientX - dragging.x) * scale;
    shift = Math.max(whole0 - from, Math.min(whole1 - to, shift));
    view = [from + shift, to + shift];
    onChange(...current());
  });
  const release = () => { dragging = null; };
  target.addEventListener("pointerup", release);
  target.addEventListener("pointerleave", release);
  target.addEventListener("dblclick", () => { view = null; onChange(...current()); });
  return { current, zoomed: () => view !== null };
}
