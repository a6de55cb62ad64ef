from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe

register = template.Library()

START, END = "\x02", "\x03"  # the service's marks around matched tokens (the recall contract's "highlighted")


@register.filter
def matched(text: str | None) -> str:
    """A keyword hit's highlighted text with <mark> around the tokens the query matched."""
    if not text:
        return ""
    return mark_safe(escape(text).replace(START, "<mark>").replace(END, "</mark>"))


@register.filter
def depth_rank(rank: int | None, depth: int = 30) -> str:
    if rank is None:
        return "not matched"
    return f"#{rank}" if rank <= depth else f"#{rank} (not in the top {depth})"
