"""The recall debugger: keyword, vector and fused rankings of one query side by side."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memories.client import BadRequest, NotFound

from ..forms import RecallForm
from ..memory import memory


@require_GET
def recall_debugger(request: HttpRequest) -> HttpResponse:
    form = RecallForm(request.GET or None)
    context: dict = {"form": form}
    if form.is_bound and form.is_valid() and form.cleaned_data["q"].strip():
        q = form.cleaned_data["q"]
        type = form.cleaned_data.get("type") or None
        limit = form.cleaned_data.get("limit") or 15
        pin = form.cleaned_data.get("pin")
        client = memory(request.memory)
        try:
            result = client.recall(q, type=type, limit=limit, debug=True)
        except BadRequest as e:
            form.add_error("q", e.message)
            return render(request, "recall.html", context, status=422)
        fused = [{"hit": h, "rank": i, **contributions(h, result.fusion)} for i, h in enumerate(result.results, start=1)]
        context.update(result=result, fused=fused, query=q, pin=pin, fusion=result.fusion)
        if pin:
            try:
                context["explain"] = client.explain(q, pin, type=type)
            except (NotFound, BadRequest):  # a memory may refuse an id it could never hold rather than miss it
                context["pin_missing"] = True
            else:
                fused_ids = [h.fact.id for h in result.results]
                context["pin_fused_rank"] = fused_ids.index(pin) + 1 if pin in fused_ids else None
    return render(request, "recall.html", context, status=400 if form.is_bound and form.errors else 200)


def contributions(hit, fusion: dict) -> dict:
    """What each list added to a hit's score: as the service reports it, or (for a service that
    does not) reciprocal rank fusion's weight / (k + rank)."""
    if hit.parts:
        return {"kw_part": hit.parts.get("kw", 0.0), "vec_part": hit.parts.get("vec", 0.0),
                "rerank_part": hit.parts.get("rerank", 0.0)}
    k = fusion.get("k", 60)
    return {
        "kw_part": fusion.get("kw_weight", 1.0) / (k + hit.kw_rank) if hit.kw_rank else 0.0,
        "vec_part": fusion.get("vec_weight", 1.0) / (k + hit.vec_rank) if hit.vec_rank else 0.0,
    }
