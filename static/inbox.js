// The inbox by keyboard: j/k move between facts, a/e/d/r/b press the focused fact's own buttons
// and links (data-key: so htmx posts exactly as a click does), u the Undo of the last action
// (wherever it is on the page), ? the keys. After an action the next fact waiting is focused.
// No inline script (CSP): base.html loads this on the Inbox page only.
"use strict";

(() => {
  let focusedId = null; // an id, not the element: htmx replaces the row itself
  const undoable = []; // ids of the lines whose Undo u presses, the latest last

  const rows = () => [...document.querySelectorAll("#inbox-list li.item")];
  const waiting = (row) => !row.classList.contains("done");
  const focused = () => (focusedId && document.getElementById(focusedId)) || null;

  function focusRow(row, { moveFocus = true } = {}) {
    if (!row) return;
    rows().forEach((r) => { r.classList.remove("focused"); r.removeAttribute("aria-current"); });
    row.classList.add("focused");
    row.setAttribute("aria-current", "true");
    focusedId = row.id;
    if (moveFocus) row.focus({ preventScroll: true });
    row.scrollIntoView({ block: "nearest" }); // the focused fact is always in view
  }

  function nextWaiting(after) {
    const all = rows();
    const from = all.indexOf(after);
    return all.slice(from + 1).find(waiting) || all.slice(0, Math.max(from, 0)).reverse().find(waiting);
  }

  function lastUndo() {
    while (undoable.length) {
      const line = document.getElementById(undoable[undoable.length - 1]);
      const button = line && line.querySelector("form.undo button");
      if (button) return button;
      undoable.pop(); // undone already, or gone
    }
    return null;
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    if (event.target.closest && event.target.closest("input, textarea, select, [contenteditable]")) return;
    if (event.key === "?") {
      const keys = document.getElementById("keys");
      if (keys) keys.open = !keys.open;
      event.preventDefault();
      return;
    }
    if (event.key === "u") {
      const button = lastUndo() || focused()?.querySelector("form.undo button");
      if (button) { button.click(); event.preventDefault(); }
      return;
    }
    const all = rows();
    if (!all.length) return;
    const row = focused();
    const at = row ? all.indexOf(row) : -1;
    if (event.key === "j") focusRow(all[Math.min(at + 1, all.length - 1)]);
    else if (event.key === "k") focusRow(all[Math.max(at - 1, 0)]);
    else if ("aedrb".includes(event.key) && event.key.length === 1 && row) {
      const target = row.querySelector(`[data-key="${event.key}"]`);
      if (!target) return;
      target.click();
    } else return;
    event.preventDefault();
  });

  // A click anywhere in a fact makes it the focused one.
  document.addEventListener("click", (event) => {
    const row = event.target.closest && event.target.closest("#inbox-list li.item");
    if (row) focusRow(row, { moveFocus: !event.target.closest("a, button, input, textarea, select") });
  });

  // "Approve all N": a fact handled on its own line (approved, deleted, replaced) is no longer one
  // of the N, and one undone is again. The form's data-ids are what the page was drawn with.
  function recount() {
    const done = new Set([...document.querySelectorAll("#inbox-list li.item.done")].map((r) => r.dataset.id));
    document.querySelectorAll("#inbox-list form[data-ids]").forEach((form) => {
      const ids = form.dataset.ids.split(",").filter((id) => id && !done.has(id));
      form.querySelector("input[name=ids]").value = ids.join(",");
      form.querySelector(".count").textContent = ids.length;
      form.hidden = ids.length === 0;
    });
  }

  // What htmx swaps in: a row's one-line result (its Undo is the next u; the next fact waiting is
  // focused), a row back after an undo or a cancelled edit (focused), an editor (desk.js focuses
  // its text), or the whole list after "approve all" (its Undo is the next u).
  document.addEventListener("htmx:load", (event) => {
    const elt = event.detail.elt;
    if (!elt.matches) return;
    if (elt.matches("#inbox-list")) {
      const banner = document.getElementById("inbox-banner");
      if (banner && banner.querySelector("form.undo")) undoable.push(banner.id);
      const first = rows().find(waiting);
      if (first) focusRow(first);
      else if (banner) banner.focus();
      return;
    }
    if (!elt.matches("#inbox-list li.item")) return;
    recount();
    if (elt.querySelector("form.undo")) undoable.push(elt.id);
    if (elt.id !== focusedId || elt.classList.contains("editing")) return;
    focusRow(waiting(elt) ? elt : (nextWaiting(elt) || elt));
  });

  document.addEventListener("DOMContentLoaded", () => {
    const first = rows().find(waiting);
    if (first) focusRow(first, { moveFocus: false }); // shown, not focused: Tab still starts at the top
  });
})();
