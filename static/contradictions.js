// The contradictions queue by keyboard: j/k move between pairs, r/b/o press the focused pair's own
// buttons (so htmx posts exactly as a click does), u undoes the latest decision (as on the Inbox;
// else the focused pair's Undo), e opens the new fact, ? the keys.
// No inline script (CSP): base.html loads this on the Contradictions page only.
"use strict";

(() => {
  const KEYS = { r: "replace", b: "keep_both", o: "keep_old" };
  let focusedId = null; // an id, not the element: htmx replaces the row itself
  const undoable = []; // ids of the pairs decided here whose Undo u presses, the latest last

  const rows = () => [...document.querySelectorAll("#conflicts > li.conflict")];
  const focused = () => (focusedId && document.getElementById(focusedId)) || null;

  function focusRow(row, { moveFocus = true } = {}) {
    if (!row) return;
    rows().forEach((r) => { r.classList.remove("focused"); r.removeAttribute("aria-current"); });
    row.classList.add("focused");
    row.setAttribute("aria-current", "true");
    focusedId = row.id;
    if (moveFocus) row.focus({ preventScroll: true });
    row.scrollIntoView({ block: "nearest" }); // the focused pair is always in view
  }

  function lastUndo() {
    while (undoable.length) {
      const button = document.getElementById(undoable[undoable.length - 1])?.querySelector("form.undo button");
      if (button) return button;
      undoable.pop(); // undone already, or gone
    }
    return null;
  }

  function nextOpen(after) {
    const all = rows();
    const from = all.indexOf(after);
    return all.slice(from + 1).find((r) => !r.classList.contains("resolved"))
      || all.slice(0, Math.max(from, 0)).reverse().find((r) => !r.classList.contains("resolved"));
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    if (event.target.closest && event.target.closest("input, textarea, select, [contenteditable]")) return;
    const all = rows();
    if (!all.length) return;
    const row = focused();
    const at = row ? all.indexOf(row) : -1;
    if (event.key === "j") focusRow(all[Math.min(at + 1, all.length - 1)]);
    else if (event.key === "k") focusRow(all[Math.max(at - 1, 0)]);
    else if (KEYS[event.key] && row) row.querySelector(`button[value="${KEYS[event.key]}"]`)?.click();
    else if (event.key === "u" && (lastUndo() || row?.querySelector("form.undo button"))) {
      (lastUndo() || row.querySelector("form.undo button")).click();
    }
    else if (event.key === "e" && row) row.querySelector('a[data-key="edit"]')?.click();
    else if (event.key === "?") { const keys = document.getElementById("keys"); if (keys) keys.open = !keys.open; }
    else return;
    event.preventDefault();
  });

  // A click anywhere in a pair makes it the focused one.
  document.addEventListener("click", (event) => {
    const row = event.target.closest && event.target.closest("#conflicts > li.conflict");
    if (row) focusRow(row, { moveFocus: !event.target.closest("a, button") });
  });

  // The swapped-in answer takes the place of the focused pair: after a decision the next open
  // pair is focused, after an undo the pair that came back.
  document.addEventListener("htmx:load", (event) => {
    const elt = event.detail.elt;
    if (!elt.matches || !elt.matches("#conflicts > li.conflict")) return;
    if (elt.querySelector("form.undo")) undoable.push(elt.id); // decided: u undoes it, wherever focus went
    if (elt.id !== focusedId) return;
    focusRow(elt.classList.contains("resolved") ? (nextOpen(elt) || elt) : elt);
  });

  document.addEventListener("DOMContentLoaded", () => {
    const first = rows().find((r) => !r.classList.contains("resolved"));
    if (first) focusRow(first, { moveFocus: false }); // shown, not focused: Tab still starts at the top
  });
})();
