"""`make serve` under a URL prefix: gunicorn, the memory beside it, every link, htmx URL and static
file of the pages under /desk/, and one log line a request that holds no query and no fact's text."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import httpx
import pytest
from bs4 import BeautifulSoup

from tests.desk_server import ServedDesk

pytestmark = pytest.mark.slow

FACT = "The owner's cat is called Biscuit and hates thunderstorms."
QUERY = "which pet dislikes storms"
URL_ATTRIBUTES = {"a": "href", "link": "href", "script": "src", "img": "src", "form": "action"}
HTMX_ATTRIBUTES = ("hx-get", "hx-post", "hx-put", "hx-delete")


@pytest.fixture(scope="module")
def desk(tmp_path_factory):
    d = ServedDesk(tmp_path_factory.mktemp("serve"), {"DASHBOARD_URL_PREFIX": "/desk"}).start()
    yield d
    d.stop()


@pytest.fixture(scope="module")
def tab(desk):
    t = desk.signed_in()
    page = t.get("/desk/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)[1]
    added = t.post("/desk/facts/new", data={"text": FACT, "type": "fact", "csrfmiddlewaretoken": token},
                   headers={"Referer": str(page.url)})
    assert added.status_code == 302 and urlsplit(added.headers["Location"]).path.startswith("/desk/facts/")
    yield t
    t.close()


def urls_on(html: str) -> tuple[set[str], set[str]]:
    """(every URL a link, stylesheet, script, image or form names; every URL an htmx attribute asks)."""
    soup = BeautifulSoup(html, "html.parser")
    plain = {el[attr] for tag, attr in URL_ATTRIBUTES.items() for el in soup.find_all(tag) if el.get(attr)}
    htmx = {el[attr] for attr in HTMX_ATTRIBUTES for el in soup.find_all(attrs={attr: True})}
    return plain, htmx


def test_both_listen_where_the_environment_says(desk):
    secret = {"X-Memory-Secret": desk.secret}
    assert httpx.get(f"{desk.memory_url}/health", headers=secret).json()["ok"] is True
    assert httpx.get(f"{desk.url}/desk/healthz").json()["ok"] is True
    assert "Listening at: " + desk.url in desk.log.read_text()  # gunicorn's own word for where it is


def test_a_visitor_is_sent_to_the_login_under_the_prefix(desk):
    first = httpx.get(f"{desk.url}/desk/")
    assert first.status_code == 302 and first.headers["Location"] == "/desk/login/?next=/desk/"
    login = httpx.get(desk.url + first.headers["Location"])
    assert login.status_code == 200 and 'action="/desk/login/"' in login.text


def test_signing_in_lands_on_the_facts_under_the_prefix(desk):
    with httpx.Client(base_url=desk.url) as t:
        page = t.get("/desk/login/", params={"next": "/desk/recall/"})
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)[1]
        r = t.post("/desk/login/", data={"username": "owner", "password": desk.password, "csrfmiddlewaretoken": token,
                                         "next": "/desk/recall/"})
        assert r.status_code == 302 and r.headers["Location"] == "/desk/recall/"
        assert t.get("/desk/recall/").status_code == 200
        assert t.cookies.jar and all(c.path == "/desk/" for c in t.cookies.jar)  # the desk's cookies stay under it


def test_every_link_htmx_url_and_static_file_on_the_pages_resolves(desk, tab):
    fact_id = re.search(r'href="/desk/facts/(\d+)/"', tab.get("/desk/").text)[1]
    pages = ["/desk/", f"/desk/facts/{fact_id}/", f"/desk/recall/?q={QUERY}", "/desk/inbox/", "/desk/trash/"]
    seen: dict[str, int] = {}
    for page in pages:
        r = tab.get(page)
        assert r.status_code == 200, page
        plain, htmx = urls_on(r.text)
        for url in plain | htmx:
            path = urlsplit(url).path
            if not path:  # "?page=2" or "#main": this page
                continue
            assert path.startswith("/desk/"), f"{page} links to {url}, outside the prefix"
        for url in plain - {a for a in plain if a.startswith("#")}:
            if url in seen or url.startswith("?"):
                continue
            seen[url] = tab.get(url).status_code
        for url in htmx:
            if urlsplit(url).path and url not in seen:
                seen[url] = tab.get(url, headers={"HX-Request": "true"}).status_code
    broken = {u: s for u, s in seen.items() if s not in (200, 302, 405)}  # 405: a POST-only form's address
    assert broken == {}
    assert len(seen) >= 30 and any("/static/" in u for u in seen)


def test_static_files_have_hashed_names_are_compressed_and_kept_for_ever(desk):
    login = httpx.get(f"{desk.url}/desk/login/").text
    css = re.search(r'href="(/desk/static/desk\.[0-9a-f]{12}\.css)"', login)[1]
    r = httpx.get(desk.url + css, headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200 and r.headers["Content-Encoding"] == "gzip" and "immutable" in r.headers["Cache-Control"]
    assert (desk.home / "var" / "static" / "staticfiles.json").exists()  # collected into a folder of its own
    page = httpx.get(f"{desk.url}/desk/login/")
    assert "no-store" in page.headers["Cache-Control"]  # the pages themselves are never kept


def test_one_log_line_a_request_without_query_secret_or_fact_text(desk, tab):
    tab.get("/desk/recall/", params={"q": QUERY})
    tab.get("/desk/", params={"q": "Biscuit"})
    tab.get("/desk/no/such%0Apage/")
    log = desk.log.read_text()
    lines = re.findall(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (\S+) (\S+) (\d{3}) [\d.]+ms$", log, re.M)
    assert ("GET", "/desk/recall/", "200") in lines and ("POST", "/desk/facts/new", "302") in lines
    assert ("GET", "/desk/no/such%0Apage/", "404") in lines  # a line break in a path cannot start a forged line
    for words in ("Biscuit", "storms", desk.secret, "next="):
        assert words not in log, words
