import re

from django import template
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.utils.text import Truncator

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
    return f"rank {rank}" if rank <= depth else f"rank {rank} (not in the top {depth})"


# The facts page has five links and four dates a row, 50 rows a page: {% url %} and the date
# filter there were a third of its server time (11 of 31 ms). These give the same text for less.
STAND_IN = 987654321  # reversed in place of an id, then replaced by the row's own


@register.simple_tag(takes_context=True)
def fact_url(context, name: str, fact_id: int) -> str:
    """{% url name fact_id %} for one of a fact's own pages (fact_detail, fact_edit, ...): each
    name is reversed once a request with a stand-in id, and each row puts its own id in. Once a
    request, not once a process: the script prefix, which names the memory, is the request's."""
    urls = context.request.__dict__.setdefault("fact_urls", {})
    if name not in urls:
        head, _, tail = reverse(name, args=[STAND_IN]).rpartition(str(STAND_IN))
        urls[name] = head, tail
    head, tail = urls[name]
    return f"{head}{fact_id:d}{tail}"


@register.filter(expects_localtime=True)
def iso(when) -> str:
    """date:'c': the instant in ISO 8601, in the current time zone, for <time datetime>."""
    return when.isoformat() if when else ""


@register.filter(expects_localtime=True)
def minute(when) -> str:
    """date:'Y-m-d H:i'."""
    return f"{when.year:04d}-{when.month:02d}-{when.day:02d} {when.hour:02d}:{when.minute:02d}" if when else ""


@register.filter
def thousands(n) -> str:
    """8000 -> "8,000", as desk.js writes the character count."""
    return f"{int(n):,}"


LONG_TEXT = 280  # characters a table shows of a fact before "show all"


@register.filter
def is_long(text: str | None) -> bool:
    return len(text or "") > LONG_TEXT


@register.filter
def shortened(text: str | None) -> str:
    return Truncator(text or "").chars(LONG_TEXT)


@register.filter
def item(mapping: dict | None, key):
    """mapping[key], or None: a dict the view keys by fact id."""
    return (mapping or {}).get(key)


FACT_REF = re.compile(r"#([0-9]{1,16})\b")


@register.simple_tag(takes_context=True)
def fact_links(context, text: str | None) -> str:
    """A note of the memory's ("replaces #12", "stored though a near duplicate of #7"), escaped,
    each "#N" a link to fact N's page."""
    text = text or ""
    out, last = [], 0
    for m in FACT_REF.finditer(text):
        out.append(escape(text[last:m.start()]))
        out.append(f'<a href="{escape(fact_url(context, "fact_detail", int(m[1])))}">#{m[1]}</a>')
        last = m.end()
    out.append(escape(text[last:]))
    return mark_safe("".join(out))
