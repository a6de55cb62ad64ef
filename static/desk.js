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
