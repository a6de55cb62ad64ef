"""docs/server.md's nginx configuration, run from Debian's nginx in front of `make serve` on
loopback, over HTTPS with a certificate made here, with the env file that page gives: the desk
under /desk/ through it, signed in with secure cookies, HSTS on, the browser's address believed
only as nginx wrote it; and Chromium through it signs in, adds a fact, deletes it and undoes the
delete, and debugs a recall (issue 48's "done when")."""

from __future__ import annotations

import re
import shutil
from functools import partial

import httpx
import pytest

from tests.memory_service import free_port
from tests.proxy_walk import browser_context_args  # noqa: F401 (a fixture: the test's own certificate accepted)
from tests.proxy_walk import desk_behind, the_brake_counts_the_proxys_address, the_desk_answers_under_the_prefix
from tests.proxy_walk import walk_in_a_browser
from tests.test_browser import browser_type_launch_args  # noqa: F401 (a fixture: Debian's Chromium)
from tests.test_deploy_check import SERVER_MD

pytestmark = pytest.mark.slow


def nginx_config(folder, port: int, http_port: int, desk_port: int, cert, key) -> str:
    """The page's two server blocks (HTTPS, and plain HTTP sent to it), on loopback with this
    test's certificate and ports."""
    blocks = re.search(r"<!-- nginx-config -->\s*```nginx\n(server \{.*?\n\}\nserver \{.*?\n\})", SERVER_MD.read_text(), re.S)[1]
    server = (blocks.replace("/etc/letsencrypt/live/desk.example.com/fullchain.pem", str(cert))
              .replace("/etc/letsencrypt/live/desk.example.com/privkey.pem", str(key))
              .replace("listen 443 ", f"listen 127.0.0.1:{port} ").replace("listen 80;", f"listen 127.0.0.1:{http_port};")
              .replace("desk.example.com;", "localhost;").replace("127.0.0.1:8000", f"127.0.0.1:{desk_port}"))
    temp = " ".join(f"{kind}_temp_path {folder / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return (f"daemon off; master_process off; pid {folder / 'nginx.pid'}; error_log {folder / 'error.log'};\n"
            f"events {{ worker_connections 64; }}\nhttp {{ access_log {folder / 'access.log'}; {temp}\n{server}\n}}\n")


def nginx_command(nginx: str, http_port: int, home, port: int, desk_port: int, cert, key) -> list[str]:
    conf = home / "nginx.conf"
    conf.write_text(nginx_config(home, port, http_port, desk_port, cert, key))
    return [nginx, "-c", str(conf), "-p", str(home)]


@pytest.fixture(scope="module")
def http_port():
    return free_port()


@pytest.fixture(scope="module")
def proxied(tmp_path_factory, http_port):
    nginx = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")
    assert nginx, "nginx is missing: .ci/run installs Debian's (apt-get install nginx)"
    with desk_behind(tmp_path_factory.mktemp("nginx"), partial(nginx_command, nginx, http_port)) as served:
        yield served


def test_the_desk_answers_under_the_prefix_through_nginx_over_https(proxied):
    _, url, cert = proxied
    bare = httpx.get(url + "/desk", verify=cert)
    assert bare.status_code == 301 and bare.headers["Location"].endswith("/desk/")
    the_desk_answers_under_the_prefix(proxied)


def test_plain_http_to_nginx_is_sent_to_https(proxied, http_port):
    page = httpx.get(f"http://localhost:{http_port}/desk/?q=x")
    assert page.status_code == 301 and page.headers["Location"] == "https://localhost/desk/?q=x"


def test_plain_http_to_the_dashboard_is_sent_to_https_but_a_monitor_is_not(proxied):
    desk, _, _ = proxied
    page = httpx.get(f"{desk.url}/desk/", headers={"Host": "localhost"})
    assert page.status_code == 301 and page.headers["Location"] == "https://localhost/desk/"
    assert httpx.get(f"{desk.url}/desk/healthz").status_code == 200


def test_the_sign_in_brake_counts_the_address_nginx_saw_not_one_the_browser_claims(proxied):
    the_brake_counts_the_proxys_address(proxied)


@pytest.mark.browser
def test_a_browser_through_nginx_under_the_prefix_adds_undoes_and_debugs_a_recall(proxied, page):
    walk_in_a_browser(page, proxied)
