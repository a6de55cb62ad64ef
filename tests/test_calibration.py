"""The calibration (dashboard/calibration.py): its rule on made-up pairs, and on the real service
with two real models (MiniLM and multilingual-e5-small through MEMORY_EMBEDDER), where it must
find each model's own threshold and be right about what that threshold merges."""

from __future__ import annotations

import httpx
import pytest

from dashboard import calibration
from dashboard.calibration import Pair
from dashboard.evaluation import set_memory
from memories.client import MemoryClient
from tests.html import soup
from tests.memory_folder import FolderService

E5 = "memories.model.embeddings:E5Small"


def pairs(same, distinct, guarded=()):
    return ([Pair("same", f"s{i}", f"t{i}", s, None) for i, s in enumerate(same)]
            + [Pair("distinct", f"d{i}", f"e{i}", s, "a number differs" if i in guarded else None) for i, s in enumerate(distinct)])


def test_the_threshold_is_the_lowest_that_merges_no_lookalike_and_trusts_the_guard_with_few():
    # ten look-alikes: at most three may sit over the threshold by cosine alone, and none unguarded.
    found = pairs(same=[0.90, 0.95, 0.99], distinct=[0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93, 0.96, 0.97, 0.985],
                  guarded={7, 8, 9})
    rec = calibration.recommend(found)
    assert rec.threshold == 0.935  # above the last unguarded one (0.93); three over it, all guarded
    assert rec.floor == 0.85  # the lowest rewording (0.90) less 0.05


def test_an_unguarded_lookalike_pushes_the_threshold_above_it():
    found = pairs(same=[0.99, 0.995], distinct=[0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.981])
    assert calibration.recommend(found).threshold == 0.985
    rows = {r.threshold: r for r in calibration.table(found)}
    assert rows[0.98].lookalikes_merged == 1 and rows[0.985].lookalikes_merged == 0
    assert rows[0.99].rewordings_merged == 2 and rows[0.995].rewordings_merged == 1


def test_no_safe_threshold_says_so():
    found = pairs(same=[0.99], distinct=[0.999, 0.9995])
    assert calibration.recommend(found).threshold is None


def test_a_pair_below_the_listing_counts_as_never_merged():
    found = pairs(same=[None, 0.99], distinct=[None, 0.6])
    assert calibration.recommend(found).floor is None  # a rewording whose cosine is unknown: no floor to say
    assert calibration.table(found)[0].rewordings_merged == 1


def test_the_expansion_run_goes_set_by_set_then_cut_off_by_cut_off():
    loaded, results = {}, {}
    steps = []
    while (step := calibration.next_step(loaded, results)) is not None:
        steps.append(step)
        if step[0] == "load":
            loaded[step[1]] = {}
        else:
            results.setdefault(str(step[1]), {})[step[2]] = [1, None, 3]
    assert len(steps) == calibration.steps_total()
    assert [s[0] for s in steps[: len(calibration.TUNING + calibration.UNSEEN)]] == ["load"] * 7
    rows = calibration.expansion_table(results)
    assert [r["expand"] for r in rows] == list(calibration.GRID)
    tuning = rows[0]["tuning"]
    assert (tuning["n"], tuning["hit1"], tuning["hit5"]) == (15, 5, 10) and tuning["mrr"] == pytest.approx((5 + 5 / 3) / 15)
    assert calibration.best_expand(rows) == max(calibration.GRID)  # a tie goes to the highest cut-off


# -- on the real service, two models -------------------------------------------------------

@pytest.fixture(scope="module", params=["minilm", "e5"])
def model_service(request, tmp_path_factory):
    env = {"MEMORY_EMBEDDER": E5} if request.param == "e5" else {}
    s = FolderService(tmp_path_factory.mktemp(request.param) / "memories", env=env).start()
    yield request.param, s
    s.stop()


def client(service, name):
    return MemoryClient(service.url_of(name), service.secret, name="test")


def merged_by_the_memory(service, name: str, threshold: float, found: list[Pair]) -> list[bool]:
    """Each pair written to a fresh memory kept at `threshold`: does the second text return the
    first's id? One pair at a time, so each second text's nearest fact is its own first."""
    memory = client(service, name)
    memory.put_settings(threshold=threshold)
    out = []
    for p in found:
        first = memory.add(p.a)
        second = memory.add(p.b)
        out.append(not second.created and second.fact.id == first.fact.id)
        for fact_id in {first.fact.id, second.fact.id}:
            memory.delete(fact_id)
    return out


def test_each_model_gets_its_own_threshold_and_the_calibration_is_right_about_what_it_merges(model_service):
    kind, service = model_service
    found = calibration.measure_pairs(client(service, calibration.MEMORY))
    assert len(found) == sum(len(v) for v in calibration.load_pairs().values())
    rec = calibration.recommend(found)
    if kind == "minilm":
        assert (rec.threshold, rec.floor) == (0.97, 0.8)  # the numbers measured on MiniLM, found again by the rule
    else:
        assert rec.threshold not in (None, 0.97) and rec.floor > 0.8  # e5's cosines sit higher: not MiniLM's numbers
    predicted = [p.merges_at(rec.threshold) for p in found]
    assert merged_by_the_memory(service, f"check-{kind}", rec.threshold, found) == predicted
    assert any(predicted) and not any(m for m, p in zip(predicted, found) if p.kind == "distinct")
    # ... and at MiniLM's threshold, e5 would leave more of the look-alikes to the guard than the rule allows
    if kind == "e5":
        over = sum(p.score is not None and p.score >= 0.97 for p in found if p.kind == "distinct")
        assert over > calibration.GUARD_SHARE * sum(p.kind == "distinct" for p in found)


@pytest.fixture
def dashboard_on(model_service, settings):
    kind, service = model_service
    service.url_of(f"owner-{kind}")  # the owner's memory, created as the owner creates one
    settings.MEMORY_URL, settings.MEMORY_SECRET, settings.MEMORY_NAMES = service.url, service.secret, [f"owner-{kind}"]
    return kind, service


@pytest.mark.django_db
def test_the_page_recommends_and_one_click_adopts_it_recorded_and_undoable(owner_client, dashboard_on):
    kind, service = dashboard_on
    page = soup(owner_client.get("/calibrate/"))
    assert page.select_one("#model-id").text == client(service, "x").health().model
    assert bool(page.select_one("#not-measured")) == (kind == "e5")
    assert bool(page.select_one("#service-status #calibrate-model")) == (kind == "e5")  # the strip says so on every page
    assert owner_client.post("/calibrate/").status_code == 302
    page = soup(owner_client.get("/calibrate/"))
    recommended = float(page.select_one("#threshold-table tr.recommended")["data-threshold"])
    own = client(service, f"owner-{kind}")
    if kind == "minilm":
        assert recommended == 0.97 and not page.select_one("#adopt-threshold")  # in use already
        return
    assert page.select_one("#adopt-threshold")
    response = owner_client.post("/calibrate/adopt", {"what": "threshold", "value": recommended})
    assert response.status_code == 302
    assert own.settings()["thresholds"]["duplicate"] == {"value": recommended, "from": "memory",
                                                           "model": own.settings()["thresholds"]["duplicate"]["model"]}
    entry = own.history(op="settings")[0][0]
    assert entry.after["threshold"] == recommended  # recorded in the memory's history, with an undo
    own.undo(entry.id)
    assert own.settings()["thresholds"]["duplicate"]["from"] == "model"
    assert own.list_facts().total == 0  # the owner's memory held no calibration fact at any point


@pytest.mark.django_db
@pytest.mark.parametrize("model_service", ["minilm"], indirect=True)  # e5's run is the browser test's
def test_the_expansion_run_steps_through_the_sets_and_adopts_its_best_cut_off(owner_client, dashboard_on):
    kind, service = dashboard_on
    owner_client.post("/calibrate/")
    run_id = int(soup(owner_client.get("/calibrate/")).select_one("#expansion form")["action"].split("/")[2])
    for _ in range(calibration.steps_total()):
        response = owner_client.post(f"/calibrate/{run_id}/step", HTTP_HX_REQUEST="true")
        assert response.status_code == 200
    page = soup(response)
    rows = page.select("#expand-table tbody tr")
    assert [float(r["data-expand"]) for r in rows] == list(calibration.GRID)
    best = float(page.select_one("#expand-table tr.recommended")["data-expand"])
    owner_client.post("/calibrate/adopt", {"what": "expand", "value": best})
    own = client(service, "owner-minilm")
    assert own.settings()["fusion"]["expand"] == best
    for name in (*calibration.TUNING, *calibration.UNSEEN):  # the sets ran in memories of their own
        assert client(service, set_memory(name)).list_facts().total > 0
    assert own.list_facts().total == 0


@pytest.mark.django_db
def test_a_step_with_the_service_down_says_so_and_keeps_the_run(owner_client, mock_memory):
    from dashboard.models import Calibration

    def down(request):
        raise httpx.ConnectError("refused")

    mock_memory(down)
    run = Calibration.objects.create(memory="default", model="m", pairs=[])  # after: a run belongs to its service
    response = owner_client.post(f"/calibrate/{run.id}/step")
    assert response.status_code == 503 and "memory service" in response.content.decode()
    run.refresh_from_db()
    assert run.loaded == {} and run.results == {}
    assert owner_client.post("/calibrate/999/step").status_code == 404
    adopt = owner_client.post("/calibrate/adopt", {"what": "threshold", "value": "0.97"})
    assert adopt.status_code == 503 and "memory service" in adopt.content.decode()
    assert owner_client.post("/calibrate/adopt", {"what": "threshold", "value": "x"}).status_code == 400
    assert owner_client.post("/calibrate/adopt", {"what": "floor", "value": "0.8"}).status_code == 400


@pytest.mark.django_db
def test_a_service_of_one_memory_is_told_where_a_calibration_can_run(owner_client, live_memory):
    response = owner_client.post("/calibrate/")
    assert response.status_code == 400 and "serves only one (serve --db)" in response.content.decode()
    with live_memory.client() as api:
        assert api.get("/facts").json()["total"] == 0  # nothing went into the owner's memory
