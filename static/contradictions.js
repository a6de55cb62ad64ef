// The contradictions queue by keyboard: j/k move between pairs, r/b/o press the focused pair's own
// buttons (so htmx posts exactly as a click does), u undoes the latest decision (as on the Inbox;
// else the focused pair's Undo), e opens the new fact, ? the keys.
// No inline script (CSP): base.html loads this on the Contradictions page only.
"use strict";

(() => {
  const KEYS = { r: "replace", b: "keep_both", o: "keep_old" };
  const list = window.keyedList("#conflicts > li.conflict", (r) => !r.classList.contains("resolved"));
  const { focused, focusRow, lastUndo } = list;

  document.addEventListener("keydown", (event) => {
    if (!list.ours(event) || !list.rows().length) return;
    const row = focused();
    if (event.key === "j" || event.key === "k") list.move(event.key);
    else if (KEYS[event.key] && row) row.querySelector(`button[value="${KEYS[event.key]}"]`)?.click();
    else if (event.key === "u" && (lastUndo() || row?.querySelector("form.undo button"))) {
      (lastUndo() || row.querySelector("form.undo button")).click();
    }
    else if (event.key === "e" && row) row.querySelector('a[data-key="edit"]')?.click();
    else if (event.key === "?") list.toggleKeys();
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
    if (elt.querySelector("form.undo")) list.undoable.push(elt.id); // decided: u undoes it, wherever focus went
    if (!list.isFocused(elt)) return;
    focusRow(elt.classList.contains("resolved") ? (list.nextOpen(elt) || elt) : elt);
  });

  document.addEventListener("DOMContentLoaded", () => {
    const first = list.rows().find((r) => !r.classList.contains("resolved"));
    if (first) focusRow(first, { moveFocus: false }); // shown, not focused: Tab still starts at the top
  });
})();
