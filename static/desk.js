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
