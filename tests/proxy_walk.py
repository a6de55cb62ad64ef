"""What the tests of the desk behind a real proxy share (tests/test_behind_nginx.py,
tests/test_behind_caddy.py): `make serve` with docs/server.md's env file, the proxy in front of it
over HTTPS with a certificate made here, and the checks and the browser's walk through it."""

from __future__ import annotations

import re
import sqlite3
import ssl
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.desk_server import ServedDesk
from tests.memory_service import free_port
from tests.test_deploy_check import server_env


def certificate(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


@contextmanager
def desk_behind(home: Path, proxy: Callable[[Path, int, int, Path, Path], list[str]],
                env: dict | None = None) -> Iterator[tuple[ServedDesk, str, ssl.SSLContext]]:
    """The desk, and in front of it a proxy at https://localhost:port: `proxy(home, port, desk_port, cert, key)` writes
    its configuration and returns the command that runs it. Yields the desk, that address and an SSL context that
    trusts the certificate."""
    settings = {k: v for k, v in server_env(home).items() if k not in ("SECRET_KEY", "MEMORY_SECRET")}  # ServedDesk makes its own
    desk = ServedDesk(home, {**settings, "ALLOWED_HOSTS": "localhost,127.0.0.1"}).start()
    process = None
    try:
        cert, key = certificate(home)
        trust = ssl.create_default_context(cafile=str(cert))
        port = free_port()
        url = f"https://localhost:{port}"
        log = home / "proxy.log"  # a file, not a pipe: nobody reads a pipe while the tests run, and a full one stops the proxy
        command = proxy(home, port, desk.port, cert, key)
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=log.open("w"))
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(url + "/desk/healthz", verify=trust)
                break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline, log.read_text()[-4000:]
                time.sleep(0.2)
        yield desk, url, trust
    finally:
        if process and process.poll() is None:
            process.terminate()
            process.wait(10)
        desk.stop()


def the_desk_answers_under_the_prefix(proxied: tuple[ServedDesk, str, ssl.SSLContext]) -> None:
    """Through the proxy: the login redirect, secure cookies, HSTS, the hashed stylesheet, a recall and /healthz."""
    desk, url, cert = proxied
    first = httpx.get(url + "/desk/", verify=cert)
    assert first.status_code == 302 and first.headers["Location"] == "/desk/login/?next=/desk/"
    tab = desk.signed_in(url, verify=cert)
    assert all(c.secure for c in tab.cookies.jar)  # sent over HTTPS only
    page = tab.get("/desk/")
    assert page.status_code == 200 and "Memory Desk" in page.text
    assert page.headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"
    css = re.search(r'href="(/desk/static/desk\.[0-9a-f]{12}\.css)"', page.text)[1]
    assert tab.get(css).status_code == 200
    assert tab.get("/desk/recall/", params={"q": "anything"}).status_code == 200
    tab.close()
    assert httpx.get(url + "/desk/healthz", verify=cert).json()["ok"] is True


def the_brake_counts_the_proxys_address(proxied: tuple[ServedDesk, str, ssl.SSLContext]) -> None:
    """A failed sign-in that claims another address in X-Forwarded-For is counted against the one the proxy saw."""
    desk, url, cert = proxied
    with httpx.Client(base_url=url, verify=cert) as tab:
        page = tab.get("/desk/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)[1]
        tab.post("/desk/login/", data={"username": "nobody", "password": "wrong", "csrfmiddlewaretoken": token},
                 headers={"X-Forwarded-For": "203.0.113.66", "Referer": str(page.url)})
    with sqlite3.connect(desk.home / "dashboard.db") as db:
        keys = {k for (k,) in db.execute("SELECT key FROM dashboard_signinfailures")}
    assert "addr:127.0.0.1" in keys and not any("203.0.113.66" in k for k in keys)


@pytest.fixture
def browser_context_args(browser_context_args):
    return {**browser_context_args, "ignore_https_errors": True}  # (the test's own certificate)


def walk_in_a_browser(page, proxied: tuple[ServedDesk, str, ssl.SSLContext]) -> None:
    """Chromium through the proxy under /desk/: signs in, adds a fact, deletes it, undoes the delete, debugs a recall."""
    from playwright.sync_api import expect

    from tests.test_browser import add_fact, fact_id_from_result
    from tests.test_browser_console import console_errors

    desk, url, _ = proxied
    errors = console_errors(page)
    page.set_default_timeout(20_000)
    page.goto(url + "/desk/")
    expect(page).to_have_url(re.compile(r"/desk/login/\?next=/desk/$"))
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill(desk.password)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(url + "/desk/")
    add_fact(page, "The owner's bike lock code is kept in the blue notebook.")
    expect(page.locator("#add-result")).to_contain_text("Added")
    fid = fact_id_from_result(page)
    assert page.locator("#add-result a").first.get_attribute("href").startswith("/desk/facts/")
    page.reload()
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator(f"#fact-{fid}").get_by_role("link", name="Delete").click()
    expect(page.locator(f"#fact-{fid}")).to_contain_text("deleted.")
    page.locator(f"#fact-{fid}").get_by_role("button", name="Undo").click()  # back, through the proxy's htmx
    expect(page.locator(f"#fact-{fid} td.text")).to_have_text("The owner's bike lock code is kept in the blue notebook.")
    page.goto(url + "/desk/recall/?q=where+is+the+bike+lock+code")
    expect(page.locator(f'#columns li[data-fact-id="{fid}"]').first).to_be_visible()
    assert page.evaluate("getComputedStyle(document.body).fontFamily") != ""  # the hashed stylesheet loaded under /desk/
    assert errors == []
