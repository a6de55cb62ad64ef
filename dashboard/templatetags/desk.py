import re

from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe

register = template.Library()

START, END = "\x02", "\x03"  # the service's marks around matched tokens (the recall contract's "highlighted")
# The tokenizer splits "Anna's" into "anna" and "s"; a query's possessive matches every one. Not a term the owner typed.
POSSESSIVE = re.compile("(['\u2019])" + START + "(s)" + END, re.IGNORECASE)


@register.filter
def matched(text: str | None) -> str:
    """A keyword hit's highlighted text with <mark> around the tokens the query matched."""
    if not text:
        return ""
    text = POSSESSIVE.sub(r"\1\2", text)
    return mark_safe(escape(text).replace(START, "<mark>").replace(END, "</mark>"))


@register.filter
def real_matches(hits: list) -> list:
    """Keyword hits that matched a query term: a memory may pad the list with BM25 0 rows."""
    return [h for h in hits if (START in h.highlighted if h.highlighted else abs(h.score) > 1e-9)]


@register.filter
def depth_rank(rank: int | None, depth: int = 30) -> str:
    if rank is None:
        return "not matched"
    return f"#{rank}" if rank <= depth else f"#{rank} (not in the top {depth})"
