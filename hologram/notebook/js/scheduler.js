// The notebook's scheduler widget: the timeline of the events the kernel sent (`events`).
import { html } from "./common.js";
import { mountTimeline } from "./timeline.js";

export default {
  render({ model, el }) {
    const root = html("div", { class: "hg-widget hg-scheduler" }, null, el);
    const view = mountTimeline(root);
    const draw = () => view.show(model.get("events"));
    draw();
    model.on("change:events", draw);
    return () => model.off("change:events", draw);
  },
};
