"""HTML checked with real selectors (BeautifulSoup), for the dashboard's view tests."""

from bs4 import BeautifulSoup


def soup(response) -> BeautifulSoup:
    return BeautifulSoup(response.content, "html.parser")


def page(response) -> BeautifulSoup:
    """A page that answered 200, parsed."""
    assert response.status_code == 200, response.content[:500]
    return soup(response)
