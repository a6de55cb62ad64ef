// A list worked by keyboard, for the Inbox and the Contradictions page alike: the focused row
// (kept by id, not the element: htmx replaces the row itself), j/k between rows, the next row
// still open after one is decided, and the Undo that u presses (the latest decision's, while it
// is on the page). Each page's own script says which keys press which buttons.
"use strict";

window.keyedList = (selector, isOpen) => {
  let focusedId = null;
  const undoable = []; // ids of the rows decided here whose Undo u presses, the latest last
  const rows = () => [...document.querySelectorAll(selector)];
  const focused = () => (focusedId && document.getElementById(focusedId)) || null;

  function focusRow(row, { moveFocus = true } = {}) {
    if (!row) return;
    rows().forEach((r) => { r.classList.remove("focused"); r.removeAttribute("aria-current"); });
    row.classList.add("focused");
    row.setAttribute("aria-current", "true");
    focusedId = row.id;
    if (moveFocus) row.focus({ preventScroll: true });
    row.scrollIntoView({ block: "nearest" }); // the focused row is always in view
  }

  function nextOpen(after) {
    const all = rows();
    const from = all.indexOf(after);
    return all.slice(from + 1).find(isOpen) || all.slice(0, Math.max(from, 0)).reverse().find(isOpen);
  }

  function lastUndo() {
    while (undoable.length) {
      const button = document.getElementById(undoable[undoable.length - 1])?.querySelector("form.undo button");
      if (button) return button;
      undoable.pop(); // undone already, or gone
    }
    return null;
  }

  // j the next row, k the one before (the first, when none is focused yet).
  function move(key) {
    const all = rows();
    const at = all.indexOf(focused());
    focusRow(key === "j" ? all[Math.min(at + 1, all.length - 1)] : all[Math.max(at - 1, 0)]);
  }

  function toggleKeys() {
    const keys = document.getElementById("keys");
    if (keys) keys.open = !keys.open;
  }

  // Keys typed into a field, or with a modifier, are the browser's.
  const ours = (event) => !(event.ctrlKey || event.metaKey || event.altKey || event.isComposing)
    && !(event.target.closest && event.target.closest("input, textarea, select, [contenteditable]"));

  return { rows, focused, focusRow, nextOpen, lastUndo, move, toggleKeys, ours, undoable,
           isFocused: (elt) => elt.id === focusedId };
};
