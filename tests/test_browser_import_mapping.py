"""A table's column mapping picked quickly in a real browser (issue 51 §3): each select posts the
whole form and the answer replaces it, so a second pick made while the first was on its way was
lost when the first's answer came back. With the server made slow, three picks in a row all hold,
and the preview is read with all three."""

import time

import pytest
from playwright.sync_api import Page, expect

from tests.test_browser import browser_type_launch_args, sign_in  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CSV = b"note,kind,when\nThe owner's locksmith is Sam Reid.,fact,2025-03-01\nHow to bleed a radiator: key at the top.,skill,\n"


def test_three_columns_picked_in_a_row_all_hold(page: Page, live_server, live_memory, owner, monkeypatch, tmp_path):
    from dashboard.views import imports

    slow_read = imports.jobs.read

    def read(job, mapping):  # the server answers each pick after the next one is made
        time.sleep(0.6)
        return slow_read(job, mapping)

    monkeypatch.setattr(imports.jobs, "read", read)
    sign_in(page, live_server)
    page.goto(live_server.url + "/import/")
    path = tmp_path / "notes.csv"
    path.write_bytes(CSV)
    page.locator("#id_file").set_input_files(str(path))
    page.locator("#id_format").select_option("csv")
    page.get_by_role("button", name="Upload and read it").click()
    expect(page.locator("#import-malformed")).to_contain_text("no column holds the text")
    page.locator("#map-text").select_option("note")
    page.locator("#map-type").select_option("kind")
    page.locator("#map-time").select_option("when")
    expect(page.locator("#import-preview")).to_be_visible(timeout=10_000)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1500)  # every answer back
    assert [page.locator(f"#map-{role}").input_value() for role in ("text", "type", "time")] == ["note", "kind", "when"]
    rows = page.locator("#import-preview tbody tr")
    expect(rows.nth(1).locator("td").nth(2)).to_have_text("skill")  # read with the type column too
    expect(rows.nth(0).locator("td").nth(4)).to_contain_text("2025-03-01")
    monkeypatch.setattr(imports.jobs, "read", slow_read)
    page.get_by_role("button", name="Dry run").click()  # with the columns shown, whatever order the picks were answered in
    expect(page.locator("#count-store")).to_have_text("2")
    expect(page.locator("#plan-store")).to_contain_text("skill")
