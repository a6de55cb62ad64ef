"""docs/server.md's Caddyfile, run from Debian's caddy in front of `make serve` on loopback, over
HTTPS with a certificate made here, with the env file that page gives: the desk under /desk/
through it, signed in with secure cookies, HSTS on, plain HTTP sent to HTTPS, the browser's
address believed only as Caddy wrote it; and Chromium through it signs in, adds a fact, deletes
it and undoes the delete, and debugs a recall (issue 48's "done when")."""

from __future__ import annotations

import os
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


def caddy_config(https_port: int, http_port: int, desk_port: int, cert, key) -> str:
    """The page's site, with this test's certificate and ports. On a server Caddy's automatic HTTPS
    gets the domain's certificate from Let's Encrypt; here there is no internet and no domain, so
    the site is localhost and `tls` names the certificate made here (Caddy then asks no one for one,
    and its redirect from plain HTTP stays on). The global options keep Caddy on loopback, on free
    ports, without its admin endpoint (port 2019, which another Caddy may hold)."""
    site = re.search(r"<!-- caddy-config -->\s*```caddy\n(.*?)```", SERVER_MD.read_text(), re.S)[1]
    assert "desk.example.com {" in site and "127.0.0.1:8000" in site
    site = (site.replace("desk.example.com {", f"localhost {{\n\ttls {cert} {key}")
            .replace("127.0.0.1:8000", f"127.0.0.1:{desk_port}"))
    options = f"\tadmin off\n\tdefault_bind 127.0.0.1\n\thttp_port {http_port}\n\thttps_port {https_port}\n"
    return f"{{\n{options}}}\n{site}"  # tabs, as `caddy fmt` writes it (else a warning each start)


def caddy_command(caddy: str, http_port: int, home, port: int, desk_port: int, cert, key) -> list[str]:
    conf = home / "Caddyfile"
    conf.write_text(caddy_config(port, http_port, desk_port, cert, key))
    return [caddy, "run", "--config", str(conf), "--adapter", "caddyfile"]


@pytest.fixture(scope="module")
def http_port():
    return free_port()


@pytest.fixture(scope="module")
def proxied(tmp_path_factory, http_port):
    caddy = shutil.which("caddy")
    assert caddy, "caddy is missing: .ci/run installs Debian's (apt-get install caddy)"
    home = tmp_path_factory.mktemp("caddy")
    # Caddy keeps its storage and an autosaved config under these (else under the home folder).
    env = {**os.environ, "XDG_DATA_HOME": str(home / "data"), "XDG_CONFIG_HOME": str(home / "config")}
    with desk_behind(home, partial(caddy_command, caddy, http_port), env) as served:
        yield served


def test_the_desk_answers_under_the_prefix_through_caddy_over_https(proxied):
    _, url, cert = proxied
    bare = httpx.get(url + "/desk", verify=cert)
    assert bare.status_code == 301 and bare.headers["Location"] == "/desk/"  # permanent, as nginx's
    the_desk_answers_under_the_prefix(proxied)


def test_plain_http_to_caddy_is_sent_to_https(proxied, http_port):
    page = httpx.get(f"http://localhost:{http_port}/desk/?q=x")
    # To the standard port: Caddy takes its https_port for an inside one, forwarded from 443.
    assert page.status_code == 308 and page.headers["Location"] == "https://localhost/desk/?q=x"


def test_the_sign_in_brake_counts_the_address_caddy_saw_not_one_the_browser_claims(proxied):
    the_brake_counts_the_proxys_address(proxied)


@pytest.mark.browser
def test_a_browser_through_caddy_under_the_prefix_adds_undoes_and_debugs_a_recall(proxied, page):
    walk_in_a_browser(page, proxied)
