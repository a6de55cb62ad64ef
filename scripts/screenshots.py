"""`make screenshots`: the dashboard's pages as PNGs for the README, taken from the real app.

Starts what `make run` starts (scripts/run.py) in a temporary folder on free ports, so the demo
memory is fresh and nothing of the owner's own var/ or local.env is read. Signs in with the
password the first run prints, loads the `personal` evaluation set, curates a little (a near
duplicate, an edit, a delete), lets the agent store three facts that contradict the demo's, so
every page has something to show, and saves one PNG a page to docs/screenshots/. The demo's own
facts count as reviewed (the owner's), so the Inbox holds what the agent stored since, and the
Import page shows a dry run of tests/fixtures/imports/chatgpt.txt. The pictures are
only ever made here: after a change to a page, run it again (`python scripts/screenshots.py
contradictions facts` takes only those).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

import httpx
from playwright.sync_api import Page, expect, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
# A desktop layout, rendered at 0.75 so a page is at most 900 x 525 pixels (the debugger, with its
# three columns, 900 x 825) and well under 150 KB; a short page is cut where it ends.
VIEWPORT = {"width": 1200, "height": 700}
SCALE = 0.75
TALL = 1100  # CSS pixels of the recall debugger (and the contradictions queue, three pairs; the inbox; a dry run)
START_SECONDS = 180  # the first run loads the model and embeds the demo memory


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(home: Path) -> tuple[subprocess.Popen, dict[str, str], str]:
    """scripts/run.py on a fresh demo memory; returns the process, its settings and the owner's password."""
    env = {**os.environ, "DESK_HOME": str(home), "DASHBOARD_PORT": str(free_port()),
           "MEMORY_URL": f"http://127.0.0.1:{free_port()}",
           "DASHBOARD_ENV_FILE": str(home / "local.env")}  # not the repo's local.env, if the owner has one
    env.pop("MEMORY_NAMES", None)  # one memory: the pages as a first run shows them
    log = home / "run.log"
    proc = subprocess.Popen([sys.executable, "scripts/run.py"], cwd=ROOT, env=env, stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + START_SECONDS
    while "Dashboard:" not in log.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            sys.exit(f"scripts/run.py did not start:\n{log.read_text()}")
        time.sleep(0.3)
    password = re.search(r"password: (\S+)", log.read_text()).group(1)
    settings = dict(line.split("=", 1) for line in (home / "local.env").read_text().splitlines()
                    if "=" in line and not line.startswith("#"))
    return proc, {**env, **settings}, password


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    # SIGTERM, not SIGINT: a shell without job control starts background commands with SIGINT ignored.
    os.killpg(proc.pid, signal.SIGTERM)  # run.py stops its children on it, as on Ctrl-C
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


def fact_id(env: dict[str, str], text: str) -> int:
    """The id of the one fact holding `text`, asked of the memory service itself."""
    r = httpx.get(env["MEMORY_URL"] + "/facts", params={"q": text}, headers={"X-Memory-Secret": env["MEMORY_SECRET"]})
    facts = r.raise_for_status().json()["facts"]
    assert len(facts) == 1, f"{len(facts)} facts hold {text!r}"
    return facts[0]["id"]


def shot(page: Page, name: str, height: int = VIEWPORT["height"]) -> None:
    page.wait_for_load_state("networkidle")  # htmx's own requests (the status strip) have landed
    end = page.evaluate("Math.ceil(document.getElementById('main').getBoundingClientRect().bottom + scrollY)")
    height = min(height, end + 16)
    page.screenshot(path=str(OUT / f"{name}.png"), full_page=True,
                    clip={"x": 0, "y": 0, "width": VIEWPORT["width"], "height": height})
    print(f"docs/screenshots/{name}.png  {(OUT / f'{name}.png').stat().st_size // 1024} KB")


def curate(page: Page, base: str, env: dict[str, str]) -> None:
    """What an owner does in a first session, through the dashboard's own forms."""
    page.goto(base + "/")
    page.locator("#add-panel").get_by_label("Text").fill("The owner's passport runs out in August 2028.")
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.locator("#add-result")).to_be_visible()

    edited = fact_id(env, "Leo has swimming lessons")
    page.goto(f"{base}/facts/{edited}/edit")
    page.get_by_label("Text").fill("Leo has swimming lessons every Wednesday at 5 pm.")
    page.get_by_role("button", name="Save").click()

    deleted = fact_id(env, "renewed the owner's library books")
    page.goto(f"{base}/facts/{deleted}/delete")
    page.get_by_role("button", name=f"Delete fact #{deleted}").click()


def agent(env: dict[str, str]) -> None:
    """What an agent does through MCP, as the memory sees it: a few recalls and a delete, under its
    MCP client's name (the Recalls page, the trash and the audit log show them)."""
    headers = {"X-Memory-Secret": env["MEMORY_SECRET"], "X-Memory-Client": "claude-code 2.1.0"}
    for q in ("Where does my mum live?", "Who is my dentist?", "When does Leo swim?", "What is the owner allergic to?"):
        httpx.post(env["MEMORY_URL"] + "/recall", json={"query": q, "limit": 5}, headers=headers).raise_for_status()
    httpx.delete(f"{env['MEMORY_URL']}/facts/{fact_id(env, 'passport runs out')}", headers=headers).raise_for_status()


# What the agent learns later that contradicts the demo memory: each write proposes what it may replace.
CONTRADICTIONS = ["The owner's dentist is Dr. de Vries on Nobelstraat.",
                  "Leo's swimming lessons moved to Thursdays at 5 pm.",
                  "The owner's brother Tomas now lives in Hamburg."]


def contradict(env: dict[str, str]) -> None:
    """The agent stores them. The owner has said "both true" of the pairs the demo's own import
    proposed (its lines have no ids: a merge, which proposes) and of all but the closest of what
    each of these writes proposes (a write proposes up to three), so the queue shows the three."""
    url, secret = env["MEMORY_URL"], env["MEMORY_SECRET"]
    agent = {"X-Memory-Secret": secret, "X-Memory-Client": "claude-code 2.1.0"}
    owner = {"X-Memory-Secret": secret, "X-Memory-Client": "dashboard"}

    def both_true(old: int, new: int) -> None:
        httpx.post(url + "/conflicts/resolve", json={"old": old, "new": new, "resolution": "keep_both"},
                   headers=owner).raise_for_status()

    for c in httpx.get(url + "/conflicts", params={"limit": 100}, headers=owner).raise_for_status().json()["conflicts"]:
        both_true(c["old"]["id"], c["new"]["id"])
    for text in CONTRADICTIONS:
        r = httpx.post(url + "/facts", json={"text": text, "source": "mcp"}, headers=agent).raise_for_status().json()
        closest, *others = sorted(r["conflicts"], key=lambda c: -c["score"])
        for c in others:
            both_true(c["id"], r["id"])


def review_demo(env: dict[str, str]) -> None:
    """The owner has looked at the demo memory: its facts are reviewed (the CLI's import left them
    not), so the Inbox holds only what the agent stores after."""
    url, owner = env["MEMORY_URL"], {"X-Memory-Secret": env["MEMORY_SECRET"], "X-Memory-Client": "dashboard"}
    while True:
        page = httpx.get(url + "/facts", params={"reviewed": "false", "limit": 100}, headers=owner).raise_for_status().json()
        if not page["facts"]:
            return
        httpx.post(url + "/facts/review", json={"ids": [f["id"] for f in page["facts"]]}, headers=owner).raise_for_status()


# What else the agent stores through MCP after the owner's last look: the Inbox's rows.
UNREVIEWED = ["The owner's new bike is a green Brompton, kept in the hall.",
              "Leo's football practice is on Saturdays at 10 in Kralingen.",
              "The owner wants a reminder to renew the car insurance in March."]


def unreviewed(env: dict[str, str]) -> None:
    headers = {"X-Memory-Secret": env["MEMORY_SECRET"], "X-Memory-Client": "claude-code 2.1.0"}
    for text in UNREVIEWED:
        httpx.post(env["MEMORY_URL"] + "/facts", json={"text": text, "source": "mcp"}, headers=headers).raise_for_status()


def dry_run(page: Page) -> None:
    """The Import page's own forms: the ChatGPT fixture uploaded, then its dry run."""
    page.get_by_label("Format").select_option("chatgpt-list")
    page.get_by_label(re.compile("^File")).set_input_files(str(ROOT / "tests" / "fixtures" / "imports" / "chatgpt.txt"))
    page.get_by_role("button", name="Upload and read it").click()
    page.get_by_role("button", name="Dry run", exact=True).click()
    expect(page.locator("#dry-run-counts")).to_be_visible()


PAGES = ["recall", "facts", "fact", "duplicates", "contradictions", "inbox", "import", "recalls", "evaluation", "trash",
         "audit", "calibration"]


def main(only: list[str]) -> None:
    if not Path(CHROMIUM).exists():
        sys.exit(f"{CHROMIUM} is missing: apt-get install chromium")
    if unknown := sorted(set(only) - set(PAGES)):
        sys.exit(f"no screenshot called {', '.join(unknown)}: the pages are {', '.join(PAGES)}")
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memory-desk-screenshots-") as tmp:
        proc, env, password = start(Path(tmp))
        try:
            if not only or "evaluation" in only:  # the set runs in a memory of its own: nothing else needs it
                subprocess.run([sys.executable, "manage.py", "load_evalset", "dashboard/evalsets/personal.json"],
                               cwd=ROOT, env={**env, "DJANGO_SETTINGS_MODULE": "dashboard.settings"}, check=True)
            base = f"http://127.0.0.1:{env['DASHBOARD_PORT']}"
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_context(viewport=VIEWPORT, device_scale_factor=SCALE).new_page()
                page.set_default_timeout(30_000)
                page.goto(base + "/login/")
                page.get_by_label("Username").fill("owner")
                page.get_by_label("Password").fill(password)
                page.get_by_role("button", name="Sign in").click()
                expect(page.get_by_role("heading", name="Facts")).to_be_visible()
                review_demo(env)
                curate(page, base, env)
                agent(env)
                contradict(env)
                unreviewed(env)

                # A question whose word the memory does not hold ("mum"), so expansion shows.
                mother = fact_id(env, "mother, Helena")
                pages = {
                    "recall": "/recall/?" + urlencode({"q": "Where does my mum live?", "pin": mother}),
                    "facts": "/",
                    "fact": f"/facts/{mother}/",
                    "duplicates": "/duplicates/?threshold=0.85",
                    "contradictions": "/contradictions/",
                    "inbox": "/inbox/",
                    "import": "/import/",
                    "recalls": "/recalls/",
                    "evaluation": "/evaluate/?" + urlencode({"suite": "personal"}),
                    "trash": "/trash/",
                    "audit": "/audit/",
                    "calibration": "/calibrate/",
                }
                assert list(pages) == PAGES
                for name, path in pages.items():
                    if only and name not in only:
                        continue
                    page.goto(base + path)
                    if name == "evaluation":  # running a set is a POST: the page's own Run button
                        page.get_by_role("button", name="Run").click()
                        page.wait_for_load_state("networkidle")
                    if name == "import":  # an upload and its dry run: the page's own forms
                        dry_run(page)
                    if name == "calibration":  # a calibration is a POST too: the pairs through the model
                        page.locator("#calibrate-run").click()
                        expect(page.locator("#recommended-threshold")).to_be_visible()
                    shot(page, name, TALL if name in ("recall", "contradictions", "inbox", "import") else VIEWPORT["height"])
                browser.close()
        finally:
            stop(proc)


if __name__ == "__main__":
    main(sys.argv[1:])
