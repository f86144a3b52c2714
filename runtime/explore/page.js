// gradgen's autograd explorer: draws the graph from the page's JSON, shows a box's panel on
// a click, steps through the engine's order, pans and zooms. No network, no libraries; all
// text goes in through textContent.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("explore-data").textContent);
  const SVG = "http://www.w3.org/2000/svg";
  const svg = document.getElementById("graph");
  const canvas = document.getElementById("canvas");
  const panel = document.getElementById("panel");
  const label = document.getElementById("step-label");
  const order = data.order;
  let scene = null; // {boxes: Map id -> g, arrows: [{arrow, path}], owner: Map id -> drawn id}
  let collapsed = false;
  let selected = null;
  let step = -1;
  let playing = null;
  const view = { x: 0, y: 0, k: 1 };

  function svgEl(tag, attrs, parent) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
    if (parent) parent.appendChild(node);
    return node;
  }

  function el(tag, text, cls, parent) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    if (parent) parent.appendChild(node);
    return node;
  }

  // -- drawing --------------------------------------------------------------------------
  function pathOf(points) {
    if (points.length < 2) return "";
    const p = points.map(([x, y]) => x.toFixed(1) + "," + y.toFixed(1));
    if (points.length >= 4 && (points.length - 1) % 3 === 0) {
      let d = "M" + p[0];
      for (let i = 1; i < p.length; i += 3) d += " C" + p[i] + " " + p[i + 1] + " " + p[i + 2];
      return d;
    }
    return "M" + p.join(" L");
  }

  function draw(graph) {
    svg.textContent = "";
    const defs = svgEl("defs", {}, svg);
    for (const [name, color] of [["head", "#444"], ["head-flow", "#d00"]]) {
      const marker = svgEl("marker", { id: name, viewBox: "0 0 10 10", refX: "9", refY: "5",
        markerUnits: "userSpaceOnUse", markerWidth: "9", markerHeight: "9",
        orient: "auto-start-reverse" }, defs);
      svgEl("path", { d: "M0,0 L10,5 L0,10 z", fill: color }, marker);
    }
    const viewport = svgEl("g", { id: "viewport" }, svg);
    const arrows = [];
    const layer = svgEl("g", { class: "arrows" }, viewport);
    for (const arrow of graph.arrows) {
      const cls = "arrow" + (arrow.style === "dotted" ? " dotted" : "");
      const path = svgEl("path", { class: cls, d: pathOf(arrow.points),
        "data-tail": arrow.tail, "data-head": arrow.head }, layer);
      if (arrow.style !== "none") path.setAttribute("marker-end", "url(#head)");
      arrows.push({ arrow, path });
    }
    const boxes = new Map();
    const boxLayer = svgEl("g", { class: "boxes" }, viewport);
    for (const box of graph.boxes) {
      const g = svgEl("g", { class: "box kind-" + box.kind, "data-id": box.id }, boxLayer);
      svgEl("rect", { x: box.x - box.width / 2, y: box.y - box.height / 2,
        width: box.width, height: box.height }, g);
      const lines = box.label.split("\n");
      const text = svgEl("text", { x: box.x - box.width / 2 + 6,
        y: box.y - (lines.length * 12) / 2 + 10 }, g);
      lines.forEach((line, i) => {
        const span = svgEl("tspan", { x: box.x - box.width / 2 + 6, dy: i ? 12 : 0 }, text);
        span.textContent = line;
      });
      g.addEventListener("click", (event) => {
        if (canvas.dataset.dragged === "1") return;
        event.stopPropagation();
        stopPlaying();
        select(box.id);
      });
      boxes.set(box.id, g);
    }
    const owner = new Map();
    for (const id of boxes.keys()) owner.set(id, id);
    for (const fold of graph.folds || []) for (const m of fold.members) owner.set(m, fold.id);
    scene = { boxes, arrows, owner, graph };
    fit();
  }

  // -- pan and zoom -----------------------------------------------------------------------
  function apply() {
    const viewport = document.getElementById("viewport");
    viewport.setAttribute("transform",
      "translate(" + view.x + "," + view.y + ") scale(" + view.k + ")");
  }

  function fit() {
    const graph = scene.graph;
    if (!graph.boxes.length) return;
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const b of graph.boxes) {
      x0 = Math.min(x0, b.x - b.width / 2); x1 = Math.max(x1, b.x + b.width / 2);
      y0 = Math.min(y0, b.y - b.height / 2); y1 = Math.max(y1, b.y + b.height / 2);
    }
    const w = canvas.clientWidth || 800, h = canvas.clientHeight || 600;
    view.k = Math.min(2, 0.95 * Math.min(w / (x1 - x0 + 1), h / (y1 - y0 + 1)));
    view.x = (w - (x1 - x0) * view.k) / 2 - x0 * view.k;
    view.y = (h - (y1 - y0) * view.k) / 2 - y0 * view.k;
    apply();
  }

  canvas.addEventListener("wheel", (event) => {
    event.preventDefault();
    const rect = canvas.getBoundingClientRect();
    const mx = event.clientX - rect.left, my = event.clientY - rect.top;
    const factor = Math.exp(-event.deltaY * 0.0015);
    const k = Math.min(8, Math.max(0.05, view.k * factor));
    view.x = mx - (mx - view.x) * (k / view.k);
    view.y = my - (my - view.y) * (k / view.k);
    view.k = k;
    apply();
  }, { passive: false });

  let drag = null;
  canvas.addEventListener("mousedown", (event) => {
    drag = { x: event.clientX, y: event.clientY, vx: view.x, vy: view.y };
    canvas.dataset.dragged = "0";
  });
  window.addEventListener("mousemove", (event) => {
    if (!drag) return;
    const dx = event.clientX - drag.x, dy = event.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) {
      canvas.dataset.dragged = "1";
      canvas.classList.add("dragging");
    }
    view.x = drag.vx + dx; view.y = drag.vy + dy;
    apply();
  });
  window.addEventListener("mouseup", () => {
    drag = null;
    canvas.classList.remove("dragging");
    setTimeout(() => { canvas.dataset.dragged = "0"; }, 0);
  });

  // -- the panel --------------------------------------------------------------------------
  function shape(s) { return "(" + s.shape.join(", ") + ")"; }
  function values(s) {
    const shown = s.values.map((v) => (typeof v === "number" ? +v.toPrecision(5) : v));
    return "[" + shown.join(", ") + (s.numel > s.values.length ? ", ..." : "") + "]";
  }
  function norm(s) { return typeof s.norm === "number" ? s.norm.toPrecision(5) : String(s.norm); }

  function section(title, cls) {
    const box = el("section", null, cls, panel);
    el("h3", title, null, box);
    return box;
  }

  function table(parent, heads) {
    const t = el("table", null, null, parent);
    const row = el("tr", null, null, t);
    for (const head of heads) el("th", head, null, row);
    return t;
  }

  function tensorRow(t, cls, first, s, extra) {
    const row = el("tr", null, cls, t);
    el("td", first, "first", row);
    el("td", shape(s), "shape", row);
    el("td", s.dtype, "dtype", row);
    el("td", norm(s), "norm", row);
    el("td", values(s), "values", row);
    if (extra) el("td", extra, "extra", row);
    return row;
  }

  function showSpec(d) {
    const spec = section("derivatives.yaml entry", "spec");
    if (!d.spec) {
      el("p", "hand-written: " + d.where + " (no entry in derivatives.yaml)", "handwritten", spec);
      return;
    }
    el("div", "- name: " + d.spec.schema, "schema", spec);
    const list = el("ul", null, "formulas", spec);
    for (const [key, formula] of d.spec.formulas) el("li", key + ": " + formula, "formula", list);
    for (const [key, formula, derived] of d.spec.result) {
      const text = (key === "result" ? "result" : "result (" + key + ")") + ": " + formula +
        (derived ? "    [stands for " + derived + "]" : "");
      el("li", text, "result", list);
    }
  }

  function showSaved(d) {
    const box = section("saved for backward", "saved");
    if (!d.saved.length) { el("p", "nothing", "note", box); return; }
    const t = table(box, ["field", "shape", "dtype", "norm", "values"]);
    for (const field of d.saved) {
      if (field.tensor) {
        tensorRow(t, "saved-row", field.name, field.tensor).dataset.name = field.name;
      } else if (field.tensors) {
        field.tensors.forEach((s, i) => {
          tensorRow(t, "saved-row", field.name + "[" + i + "]", s).dataset.name = field.name;
        });
      } else {
        const row = el("tr", null, "saved-row value-row", t);
        row.dataset.name = field.name;
        el("td", field.name, "first", row);
        const cell = el("td", field.value, "value", row);
        cell.colSpan = 4;
        if (field.without_tensor) {
          el("div", "the " + field.without_tensor + " only, saved without the tensor",
            "note without-tensor", cell);
        }
      }
    }
  }

  function showGrads(d) {
    const received = section("gradients received", "received");
    if (!d.ran) {
      el("p", data.backward ? "this node did not run in the recorded backward"
        : "no backward was recorded: run the program's backward under the explorer", "note",
        received);
    } else {
      const t = table(received, ["#", "shape", "dtype", "norm", "values"]);
      d.received.forEach((s, i) => {
        if (s) tensorRow(t, "received-row", i, s);
        else { const r = el("tr", null, "received-row none", t); el("td", i, "first", r);
          el("td", "undefined (None)", "note", r).colSpan = 4; }
      });
    }
    const produced = section("gradients produced (next_functions)", "produced");
    if (!d.edges.length) { el("p", "none: a sink", "note", produced); return; }
    const t = table(produced, ["to", "shape", "dtype", "norm", "values"]);
    d.edges.forEach((edge, i) => {
      const to = i + " \u2192 " + (edge.cls === null ? "None" : edge.cls + "[" + edge.input_nr + "]");
      if (d.ran && edge.grad) {
        tensorRow(t, "produced-row", to, edge.grad);
        if (edge.reduced) {
          const r = el("tr", null, "reduced-row", t);
          el("td", "", null, r);
          el("td", "the formula returned " + shape(edge.reduced) + "; the engine summed dims [" +
            edge.reduced.dims.join(", ") + "] to " + "(" + edge.reduced.to.join(", ") + ")" +
            " (validate_outputs \u2192 sum_to)", "note", r).colSpan = 4;
        }
      } else {
        const r = el("tr", null, "produced-row none", t);
        el("td", to, "first", r);
        el("td", d.ran ? "not computed: " + edge.why : "", "why note", r).colSpan = 4;
      }
    });
  }

  function showReduction(d) {
    if (!d.reduced_into.length && !d.grad_after) return;
    const box = section("the broadcast reduction", "reduction");
    for (const r of d.reduced_into) {
      el("p", r.cls + " returned a gradient of shape " + shape(r) + " for this leaf; the engine " +
        "summed it over dims [" + r.dims.join(", ") + "] to (" + r.to.join(", ") + ") before it " +
        "reached AccumulateGrad.", "before", box);
      const t = table(box, ["", "shape", "dtype", "norm", "values"]);
      tensorRow(t, "before-row", "before", r);
      if (d.received && d.received[0]) tensorRow(t, "after-row", "after", d.received[0]);
      if (r.column) {
        el("p", "first value of each of the " + r.shape[0] + " rows, summed: " +
          r.column.map((v) => +(+v).toPrecision(4)).join(" + ") +
          (r.shape[0] > r.column.length ? " + ..." : "") + " = " +
          (+r.column_sum).toPrecision(6), "column", box);
      }
    }
    if (d.grad_after) {
      const t = table(box, ["", "shape", "dtype", "norm", "values"]);
      tensorRow(t, "grad-after-row", ".grad after", d.grad_after);
    }
  }

  function showProfile(d) {
    if (!d.ran) return;
    const box = section("time and FLOPs", "profile");
    if (d.time_us === null || d.time_us === undefined) {
      el("p", "not profiled: run with python -m runtime.explore --profile, or the backward " +
        "inside torch.profiler.profile(with_flops=True)", "note", box);
    } else {
      el("p", "time: " + d.time_us.toFixed(1) + " us; FLOPs: " + d.flops, "timing", box);
    }
  }

  function showTips(d) {
    if (!d.tips.length) return;
    const box = section("tips that apply", "tips");
    const list = el("ul", null, null, box);
    for (const tip of d.tips) {
      const a = el("a", tip.title, null, el("li", null, null, list));
      a.href = tip.href;
      a.target = "_blank";
    }
  }

  function showNode(d) {
    el("h2", d.cls, "class-name", panel);
    if (d.name !== d.cls) el("div", "name(): " + d.name, "note", panel);
    el("p", d.ran ? "ran at step " + (d.step + 1) + " of " + order.length
      : (data.backward ? "not run in the recorded backward" : "no backward recorded"),
      "ran note", panel);
    showSpec(d);
    showGrads(d);
    showReduction(d);
    showSaved(d);
    showProfile(d);
    showTips(d);
    const code = section(d.spec ? "generated Python" : "Python", "code");
    el("pre", d.code || "(source not available)", "source", code);
  }

  function showTensor(d) {
    el("h2", d.name || "(unnamed tensor)", "class-name", panel);
    const kinds = { leaf: "a leaf that requires grad: its AccumulateGrad fills .grad",
      output: "the tensor explored", base: "the base of a view", saved: "a saved tensor" };
    el("p", kinds[d.kind] || d.kind, "note", panel);
    const box = section("tensor", "tensor");
    const t = table(box, ["", "shape", "dtype", "norm", "values"]);
    tensorRow(t, "tensor-row", "value", d.tensor);
    if (d.grad) tensorRow(t, "grad-row", ".grad", d.grad);
    el("p", "requires_grad=" + d.requires_grad + ", is_leaf=" + d.is_leaf +
      (d.grad_fn ? ", grad_fn=" + d.grad_fn : ""), "note", box);
    showTips(d);
  }

  function showFold(fold) {
    el("h2", fold.label.split("\n")[0], "class-name", panel);
    el("p", fold.repeats + " repetitions of the same block, folded; the first is drawn in " +
      "full. Click \u201cexpand\u201d to see every box.", "note", panel);
    const list = el("ul", null, null, section("folded boxes", "folded"));
    for (const member of fold.members) {
      const d = data.details[member];
      el("li", d ? (d.cls || d.name || member) : member, null, list);
    }
  }

  function select(id) {
    if (selected && scene.boxes.has(selected)) scene.boxes.get(selected).classList.remove("selected");
    const drawn = scene.owner.get(id) || id;
    selected = drawn;
    if (scene.boxes.has(drawn)) scene.boxes.get(drawn).classList.add("selected");
    panel.textContent = "";
    panel.dataset.id = id;
    const fold = (scene.graph.folds || []).find((f) => f.id === id);
    if (fold) { showFold(fold); return; }
    const d = data.details[id];
    if (!d) { el("p", "nothing recorded for this box", "note", panel); return; }
    if (d.type === "node") showNode(d); else showTensor(d);
  }

  // -- the stepper ------------------------------------------------------------------------
  function goto(index) {
    step = Math.max(-1, Math.min(order.length - 1, index));
    for (const g of scene.boxes.values()) g.classList.remove("running", "done");
    for (const { path } of scene.arrows) {
      path.classList.remove("flowing");
      if (path.getAttribute("marker-end")) path.setAttribute("marker-end", "url(#head)");
    }
    if (step < 0) { label.textContent = "step 0 / " + order.length; return; }
    for (let i = 0; i < step; i++) {
      const g = scene.boxes.get(scene.owner.get(order[i]));
      if (g) g.classList.add("done");
    }
    const id = order[step];
    const drawn = scene.owner.get(id);
    const g = scene.boxes.get(drawn);
    if (g) { g.classList.remove("done"); g.classList.add("running"); }
    // The gradients it produces travel its next_functions: drawn as arrows into the node.
    for (const { arrow, path } of scene.arrows) {
      if (arrow.head === drawn && arrow.style !== "none") {
        path.classList.add("flowing");
        path.setAttribute("marker-end", "url(#head-flow)");
      }
    }
    label.textContent = "step " + (step + 1) + " / " + order.length + ": " +
      data.details[id].cls;
    label.dataset.id = id;
    select(id);
  }

  function stopPlaying() {
    if (playing) { clearInterval(playing); playing = null; }
  }

  document.getElementById("step-first").onclick = () => { stopPlaying(); goto(-1); };
  document.getElementById("step-prev").onclick = () => { stopPlaying(); goto(step - 1); };
  document.getElementById("step-next").onclick = () => { stopPlaying(); goto(step + 1); };
  document.getElementById("play").onclick = () => {
    if (playing) { stopPlaying(); return; }
    if (step >= order.length - 1) goto(-1);
    playing = setInterval(() => {
      if (step >= order.length - 1) { stopPlaying(); return; }
      goto(step + 1);
    }, 500);
  };
  document.getElementById("fit").onclick = () => fit();
  const collapse = document.getElementById("collapse");
  if (!data.collapsed) collapse.classList.add("hidden");
  collapse.onclick = () => {
    collapsed = !collapsed;
    collapse.textContent = collapsed ? "expand" : "collapse repeats";
    draw(collapsed ? data.collapsed : data);
    if (step >= 0) goto(step);
  };
  document.addEventListener("keydown", (event) => {
    if (event.key === "ArrowRight") { stopPlaying(); goto(step + 1); }
    if (event.key === "ArrowLeft") { stopPlaying(); goto(step - 1); }
  });

  document.getElementById("title").textContent = data.title + " \u2014 " +
    data.boxes.length + " boxes, " + (order.length ? order.length + " nodes run by the engine"
      : "no backward recorded");
  draw(data);
  label.textContent = "step 0 / " + order.length;
  window.explorer = { data, select, goto, fit, state: () => ({ step, collapsed, selected }) };
  document.body.dataset.ready = "1";
}());
