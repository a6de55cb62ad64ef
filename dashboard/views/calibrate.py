"""The calibration page: where the memory's model puts rewordings and look-alikes, what each
duplicate threshold would merge or miss, which expansion cut-off recalls best, and the values
to adopt (dashboard/calibration.py measures; this shows and keeps)."""

from __future__ import annotations

from dataclasses import asdict

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from memories.client import BadRequest, NotFound

from .. import calibration
from ..evaluation import set_memory
from ..memory import adopt_choices, forget_status, memory, owner_memories
from ..models import Calibration
from ..problems import owner_mistake
from .evaluate import in_memory

ONE_MEMORY = ("The calibration runs in memories of its own (“{name}”), never in yours, and the service at this "
              "address serves only one (serve --db). Serve a folder of memories (serve --dir, as make run does) "
              "or use the Worker.")


# What both the page and a step's fragment name: the cut-offs tried and the sets they run on.
SHOWN = {"grid": calibration.GRID, "sets": {"tuning": calibration.TUNING, "unseen": calibration.UNSEEN}}


def model_of(request: HttpRequest) -> dict:
    """The memory's model and the numbers it uses now (GET /settings)."""
    settings = memory(request.memory).settings()
    return {"id": (settings.get("model") or {}).get("id") or "", "measured": (settings.get("model") or {}).get("measured"),
            "thresholds": settings.get("thresholds") or {}, "fusion": settings.get("fusion") or {}}


def pairs_of(run: Calibration) -> list[calibration.Pair]:
    return [calibration.Pair(**p) for p in run.pairs]


@require_http_methods(["GET", "POST"])
def calibrate(request: HttpRequest) -> HttpResponse:
    """GET shows the latest run for this memory's model; POST measures the pairs anew."""
    model = model_of(request)
    if request.method == "POST":
        try:
            client = memory(calibration.MEMORY)
            client.create_memory(calibration.MEMORY)  # its own memory, made explicitly (idempotent)
            pairs = calibration.measure_pairs(client)
        except NotFound:
            forget_status()
            return owner_mistake(request, "This memory service holds one memory", ONE_MEMORY.format(name=calibration.MEMORY),
                                 back=reverse("calibrate"))
        Calibration.objects.create(memory=request.memory, model=model["id"], pairs=[asdict(p) for p in pairs],
                                   fusion=model["fusion"])
        return redirect("calibrate")
    run = Calibration.objects.filter(memory=request.memory, model=model["id"]).first()
    context: dict = {"model": model, "run": run, **SHOWN, **adopt_choices(request.memory), "share": round(calibration.GUARD_SHARE * 100),
                     "recalls": calibration.recalls_total()}
    if run:
        pairs = pairs_of(run)
        rec = calibration.recommend(pairs)
        shown = [r for r in rec.rows if round(r.threshold * 100, 6) % 1 == 0 or r.threshold == rec.threshold]
        low = min((p.score for p in pairs if p.score is not None), default=calibration.LOWEST)
        context.update(rec=rec, rows=[r for r in shown if r.threshold >= (rec.floor or low) - 0.05],
                       chart=chart(calibration.bins(pairs), rec.threshold),
                       same_total=sum(p.kind == "same" for p in pairs), lookalike_total=sum(p.kind == "distinct" for p in pairs), pairs=sorted(pairs, key=lambda p: -(p.score or 0)),
                       lowest=calibration.LOWEST,
                       current=model["thresholds"].get("duplicate", {}).get("value"),
                       **expansion_context(run))
    return render(request, "calibrate.html", context)


def chart(bins: list[dict], threshold: float | None, width: int = 720, height: int = 140) -> dict:
    """An SVG's numbers: per 0.01 bin, the rewordings' bar and the look-alikes' side by side,
    and the recommended threshold's line."""
    plot = height - 14
    tallest = max([b["same"] for b in bins] + [b["distinct"] for b in bins] + [1])
    step = width / len(bins)
    x_of = lambda cosine: round((cosine - bins[0]["lo"]) / 0.01 * step, 1)  # noqa: E731
    bars = []
    for i, b in enumerate(bins):
        for j, kind in enumerate(("same", "distinct")):
            h = round(plot * b[kind] / tallest, 1)
            if h:
                bars.append({"x": round(i * step + j * step / 2, 1), "y": round(plot - h, 1), "w": round(step / 2 - 0.5, 1),
                             "h": h, "kind": kind, "lo": b["lo"], "count": b[kind]})
    ticks = [{"x": x_of(b["lo"]), "label": f"{b['lo']:.2f}"} for b in bins if round(b["lo"] * 100) % 5 == 0]
    return {"width": width, "height": height, "plot": plot, "bars": bars, "ticks": ticks, "tallest": tallest,
            "line": x_of(threshold) if threshold else None}


def expansion_context(run: Calibration) -> dict:
    rows = calibration.expansion_table(run.results)
    done = calibration.next_step(run.loaded, run.results) is None
    steps = len(run.loaded) + sum(len(v) for v in run.results.values())
    return {"expand_rows": rows, "expand_best": calibration.best_expand(rows) if done else None,
            "expand_done": done, "expand_started": bool(run.loaded),
            "progress": steps, "steps": calibration.steps_total()}


@require_POST
def calibrate_step(request: HttpRequest, run_id: int) -> HttpResponse:
    """One step of the expansion run (a set loaded into its own memory, or one set run at one
    cut-off): each is short, so no request holds the page past its deadline. The fragment asks
    for the next step until the run is done."""
    run = get_object_or_404(Calibration, id=run_id, memory=request.memory)
    step = calibration.next_step(run.loaded, run.results)
    if step:
        name = step[-1]  # ("load", set) or ("run", cut-off, set)
        client = memory(set_memory(name))
        try:
            if step[0] == "load":
                client.create_memory(set_memory(name))  # a set's memory, made explicitly (idempotent)
                run.loaded[name] = calibration.load_set_facts(client, name)
            else:
                fusion = {**run.fusion, "expand": step[1]}
                run.results.setdefault(str(step[1]), {})[name] = calibration.run_set(client, name, run.loaded[name], fusion)
        except NotFound:
            return owner_mistake(request, "This memory service holds one memory", ONE_MEMORY.format(name=set_memory(name)),
                                 back=reverse("calibrate"))
        run.save(update_fields=["loaded", "results"])
    return render(request, "calibrate.html#expansion", {"run": run, **SHOWN, **adopt_choices(request.memory), **expansion_context(run)})


@require_POST
def calibrate_adopt(request: HttpRequest) -> HttpResponse:
    """Keep a recommended value as the memory's own: the duplicate threshold, or the expansion
    cut-off over its recall settings. The memory records it in its history, with an undo."""
    back = reverse("calibrate")
    name = request.POST.get("memory") or adopt_choices(request.memory)["target"]
    if name not in owner_memories():  # an evaluation set's memory is the measurement's, never a place to keep its result
        return owner_mistake(request, "Choose one of your memories", f"“{name}” is not one of your memories "
                             f"({', '.join(owner_memories())}): choose one of them under “in memory”.", back=back)
    client = memory(name)
    what = request.POST.get("what")
    try:
        value = float(request.POST.get("value", ""))
    except ValueError:
        return owner_mistake(request, "That value cannot be kept", "The value is not a number.", back=back)
    try:
        if what == "threshold":
            client.put_settings(threshold=value)
            said = f"duplicate threshold {value:g}: a new fact this close to one of its type returns that one's id"
        elif what == "expand":
            client.put_settings({**(client.settings().get("fusion") or {}), "expand": value})
            said = f"expansion cut-off {value:g}" + (" (expansion off)" if value == 0 else "")
        else:
            return owner_mistake(request, "That value cannot be kept", "Only the duplicate threshold and the expansion "
                                 "cut-off are the memory's own; the review floor belongs to the service.", back=back)
    except BadRequest as e:
        return owner_mistake(request, "The memory refused that value", e.message, status=422, back=back)
    forget_status()
    messages.success(request, f"Memory “{name}” now uses {said}. Its audit log has the change, where Undo "
                              "puts the old value back.")
    return redirect(in_memory(request, name, reverse("calibrate")))
