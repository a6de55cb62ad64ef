// The inbox by keyboard: j/k move between facts, a/e/d/r/b press the focused fact's own buttons
// and links (data-key: so htmx posts exactly as a click does), u the Undo of the last action
// (wherever it is on the page), ? the keys. After an action the next fact waiting is focused.
// No inline script (CSP): base.html loads this on the Inbox page only.
"use strict";

(() => {
  const waiting = (row) => !row.classList.contains("done");
  const list = window.keyedList("#inbox-list li.item", waiting);
  const { rows, focused, focusRow } = list;

  document.addEventListener("keydown", (event) => {
    if (!list.ours(event)) return;
    if (event.key === "?") {
      list.toggleKeys();
      event.preventDefault();
      return;
    }
    if (event.key === "u") {
      const button = list.lastUndo() || focused()?.querySelector("form.undo button");
      if (button) { button.click(); event.preventDefault(); }
      return;
    }
    if (!rows().length) return;
    const row = focused();
    if (event.key === "j" || event.key === "k") list.move(event.key);
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
      if (banner && banner.querySelector("form.undo")) list.undoable.push(banner.id);
      const first = rows().find(waiting);
      if (first) focusRow(first);
      else if (banner) banner.focus();
      return;
    }
    if (!elt.matches("#inbox-list li.item")) return;
    recount();
    if (elt.querySelector("form.undo")) list.undoable.push(elt.id);
    if (!list.isFocused(elt) || elt.classList.contains("editing")) return;
    focusRow(waiting(elt) ? elt : (list.nextOpen(elt) || elt));
  });

  document.addEventListener("DOMContentLoaded", () => {
    const first = rows().find(waiting);
    if (first) focusRow(first, { moveFocus: false }); // shown, not focused: Tab still starts at the top
  });
})();
