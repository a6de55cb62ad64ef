// Memory Desk: the little behaviour htmx does not cover. No inline scripts (CSP).
"use strict";

document.addEventListener("click", (event) => {
  // Select all facts on the page.
  if (event.target.id === "select-all") {
    document.querySelectorAll('input[name="ids"]').forEach((box) => { box.checked = event.target.checked; });
    return;
  }
  // Recall debugger: selecting a fact highlights it in all three columns.
  const item = event.target.closest("#columns li[data-fact-id]");
  if (item && !event.target.closest("a")) selectFact(item.dataset.factId);
});

document.addEventListener("keydown", (event) => {
  const item = event.target.closest && event.target.closest("#columns li[data-fact-id]");
  if (item && (event.key === "Enter" || event.key === " ")) {
    event.preventDefault();
    selectFact(item.dataset.factId);
  }
});

function selectFact(id) {
  const already = document.querySelector(`#columns li.selected[data-fact-id="${id}"]`);
  document.querySelectorAll("#columns li.selected").forEach((li) => { li.classList.remove("selected"); li.removeAttribute("aria-current"); });
  if (already) return;
  document.querySelectorAll(`#columns li[data-fact-id="${id}"]`).forEach((li) => {
    li.classList.add("selected");
    li.setAttribute("aria-current", "true");
  });
}

// The inline editor: Enter saves (Shift+Enter is a new line in the text), Escape cancels.
document.addEventListener("keydown", (event) => {
  const editor = event.target.closest && event.target.closest("form.inline-edit");
  if (!editor) return;
  if (event.key === "Escape") {
    event.preventDefault();
    editor.querySelector(".cancel").click();
  } else if (event.key === "Enter" && event.target.tagName === "TEXTAREA" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    editor.requestSubmit();
  }
});

// An error shown beside a row is stale once the next request goes out.
document.addEventListener("htmx:beforeRequest", () => {
  document.querySelectorAll(".row-problem").forEach((el) => el.remove());
});

// Near-duplicates: the slider's value shows as it moves (htmx fetches the pairs after a pause).
document.addEventListener("input", (event) => {
  if (event.target.id === "id_threshold") {
    const out = document.getElementById("threshold-value");
    if (out) out.value = Number(event.target.value).toFixed(2);
  }
});

// A text with a limit (data-max-chars) counts its characters as the owner types, and past the
// limit says by how much and refuses to submit (no maxlength: a browser cuts a paste there
// without a word). The server refuses too.
function countChars(box) {
  const max = Number(box.dataset.maxChars);
  const out = document.getElementById(`${box.id}-chars`);
  const n = box.value.length;
  const over = n - max;
  const message = over > 0
    ? `A fact holds at most ${max.toLocaleString("en")} characters; this text has ${n.toLocaleString("en")}. Shorten it by ${over.toLocaleString("en")}.`
    : "";
  box.setCustomValidity(message);
  if (!out) return;
  out.textContent = over > 0 ? message : `${n.toLocaleString("en")} / ${max.toLocaleString("en")} characters`;
  out.classList.toggle("over", over > 0);
}

document.addEventListener("input", (event) => {
  if (event.target.matches && event.target.matches("textarea[data-max-chars]")) countChars(event.target);
});

// Swapped-in editors count from the start; a text the server refused keeps its message.
function countAll(root) {
  root.querySelectorAll("textarea[data-max-chars]").forEach(countChars);
}
document.addEventListener("DOMContentLoaded", () => countAll(document));
document.addEventListener("htmx:load", (event) => countAll(event.detail.elt));

// The inline editor opens with the cursor at the end of its text (htmx focuses [autofocus] after
// a swap, at the start), unless the owner has already put it somewhere or selected something.
document.addEventListener("htmx:load", (event) => {
  const box = event.detail.elt.querySelector && event.detail.elt.querySelector("form.inline-edit textarea[autofocus]");
  if (!box) return;
  box.focus();
  if (box.selectionStart === 0 && box.selectionEnd === 0) box.setSelectionRange(box.value.length, box.value.length);
});
