"""docs/server.md's nginx configuration, run from Debian's nginx in front of `make serve` on
loopback, over HTTPS with a certificate made here, with the env file that page gives: the desk
under /desk/ through it, signed in with secure cookies, HSTS on, the browser's address believed
only as nginx wrote it; and Chromium through it signs in, adds a fact, deletes it and undoes the
delete, and debugs a recall (issue 48's "done when")."""

from __future__ import annotations

import re
import shutil
import sqlite3
import ssl
import subprocess
import time

import httpx
import pytest

from tests.desk_server import ServedDesk
from tests.test_browser import browser_type_launch_args  # noqa: F401 (a fixture: Debian's Chromium)
from tests.memory_service import free_port
from tests.test_deploy_check import SERVER_MD, server_env

pytestmark = pytest.mark.slow


def certificate(folder) -> tuple:
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


def nginx_config(folder, port: int, desk_port: int, cert, key) -> str:
    """The page's first server block, on loopback with this test's certificate and ports."""
    block = re.search(r"<!-- nginx-config -->\s*```nginx\n(server \{.*?\n\})", SERVER_MD.read_text(), re.S)[1]
    server = (block.replace("/etc/letsencrypt/live/desk.example.com/fullchain.pem", str(cert))
              .replace("/etc/letsencrypt/live/desk.example.com/privkey.pem", str(key))
              .replace("listen 443 ", f"listen 127.0.0.1:{port} ").replace("desk.example.com;", "localhost;")
              .replace("127.0.0.1:8000", f"127.0.0.1:{desk_port}"))
    temp = " ".join(f"{kind}_temp_path {folder / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return (f"daemon off; master_process off; pid {folder / 'nginx.pid'}; error_log {folder / 'error.log'};\n"
            f"events {{ worker_connections 64; }}\nhttp {{ access_log {folder / 'access.log'}; {temp}\n{server}\n}}\n")


@pytest.fixture(scope="module")
def proxied(tmp_path_factory):
    nginx = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")
    assert nginx, "nginx is missing: .ci/run installs Debian's (apt-get install nginx)"
    home = tmp_path_factory.mktemp("nginx")
    settings = {k: v for k, v in server_env(home).items() if k not in ("SECRET_KEY", "MEMORY_SECRET")}  # ServedDesk makes its own
    desk = ServedDesk(home, {**settings, "ALLOWED_HOSTS": "localhost,127.0.0.1"}).start()
    proxy = None
    try:
        cert, key = certificate(home)
        trust = ssl.create_default_context(cafile=str(cert))
        port = free_port()
        conf = home / "nginx.conf"
        conf.write_text(nginx_config(home, port, desk.port, cert, key))
        proxy = subprocess.Popen([nginx, "-c", str(conf), "-p", str(home)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        url = f"https://localhost:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(url + "/desk/healthz", verify=trust)
                break
            except httpx.TransportError:
                assert proxy.poll() is None and time.monotonic() < deadline, proxy.stderr.read().decode()
                time.sleep(0.2)
        yield desk, url, trust
    finally:
        if proxy and proxy.poll() is None:
            proxy.terminate()
            proxy.wait(10)
        desk.stop()


def test_the_desk_answers_under_the_prefix_through_nginx_over_https(proxied):
    desk, url, cert = proxied
    bare = httpx.get(url + "/desk", verify=cert)
    assert bare.status_code == 301 and bare.headers["Location"].endswith("/desk/")
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


def test_plain_http_to_the_dashboard_is_sent_to_https_but_a_monitor_is_not(proxied):
    desk, _, _ = proxied
    page = httpx.get(f"{desk.url}/desk/", headers={"Host": "localhost"})
    assert page.status_code == 301 and page.headers["Location"] == "https://localhost/desk/"
    assert httpx.get(f"{desk.url}/desk/healthz").status_code == 200


def test_the_sign_in_brake_counts_the_address_nginx_saw_not_one_the_browser_claims(proxied):
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
    return {**browser_context_args, "ignore_https_errors": True}  # (this test's own certificate)


@pytest.mark.browser
def test_a_browser_through_nginx_under_the_prefix_adds_undoes_and_debugs_a_recall(proxied, page):
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
