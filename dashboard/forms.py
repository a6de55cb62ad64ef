from datetime import UTC, date, datetime, time
from datetime import time as time_of_day  # (AsOfDay.time is a method)

from django import forms

from memories.client import MAX_FACT_ID

TYPE_CHOICES = [("fact", "fact"), ("skill", "skill"), ("log", "log")]
MAX_TEXT = 8000  # the contract's limit; the service enforces it too
MAX_ID = MAX_FACT_ID  # the contract's range, both memories': anything past it is the owner's typo, not the service's error


def parse_id(value: object) -> int | None:
    """A fact id from a form or query value, or None if it cannot be one."""
    try:
        n = int(str(value).strip())
    except (TypeError, ValueError):
        return None
    return n if 1 <= n <= MAX_ID else None


def too_long(limit: int = MAX_TEXT) -> str:
    return f"A fact holds at most {limit:,} characters; this text has %(show_value)s. Shorten it by %(over)s."


class TextLimit(forms.CharField):
    """Text with a limit the server checks and the page counts (desk.js), with no `maxlength`
    attribute: a browser cuts a paste at maxlength without a word."""

    def widget_attrs(self, widget):
        attrs = super().widget_attrs(widget)
        attrs.pop("maxlength", None)
        attrs["data-max-chars"] = str(self.max_length)
        return attrs

    def __init__(self, *, max_length: int, **kwargs):
        super().__init__(max_length=max_length, **kwargs)
        # validate() says the length once, with the numbers a person needs.
        self.validators = [v for v in self.validators if getattr(v, "code", "") != "max_length"]

    def validate(self, value):
        super().validate(value)
        if value and len(value) > self.max_length:
            raise forms.ValidationError(too_long(self.max_length), code="max_length",
                                        params={"show_value": f"{len(value):,}", "over": f"{len(value) - self.max_length:,}"})


class FactForm(forms.Form):
    text = TextLimit(max_length=MAX_TEXT, widget=forms.Textarea(attrs={"rows": 2}), strip=True)
    type = forms.ChoiceField(choices=TYPE_CHOICES, initial="fact")
    source = forms.CharField(max_length=200, required=False, strip=True)


# The orders GET /facts takes (docs/memory-api.md): a sortable column, newest or highest first,
# or with _asc the other way round.
SORT_COLUMNS = ("id", "created", "updated")
ORDERS = tuple(o for column in SORT_COLUMNS for o in (column, f"{column}_asc"))
DEFAULT_ORDER = "created"


MAX_SOURCE = 200  # the contract's: a longer source is no fact's


def not_blank(value: str, what: str) -> str:
    """Surrounding spaces go; spaces alone are refused, not read as no filter (which is every fact)."""
    if value and not value.strip():
        raise forms.ValidationError(f"{what} is only spaces, which no fact can be found by. "
                                    f"Type a word, or empty it to list every fact.", code="blank")
    return value.strip()


REVIEW_STATES = ("unreviewed", "reviewed")  # GET /facts `reviewed` false and true
FILTERS = ("q", "type", "source", "client", "source_prefix", "reviewed")  # what narrows the facts list
STATUSES = ("current", "replaced", "expired", "all")  # GET /facts `status`; the list shows what is current unless told
DEFAULT_STATUS = "current"


def end_of_day(day: date) -> str:
    """A day from <input type=date> as the contract's time: its last microsecond, UTC."""
    return datetime.combine(day, time.max, tzinfo=UTC).isoformat().replace("+00:00", "Z")


class AsOfDay(forms.DateField):
    """"As of" a day: the memory as it was at that day's end (UTC). Today is now, so no `as_of`
    is sent; a day to come is refused (the memory answers only for times that have passed)."""

    def clean(self, value):
        day = super().clean(value)
        if day and day > datetime.now(UTC).date():
            raise forms.ValidationError(f"{day:%Y-%m-%d} has not come yet: the memory shows only what it was, "
                                        "up to now.", code="future")
        return day

    @staticmethod
    def time(day: date | None, at: time_of_day | None = None) -> str | None:
        """The contract's time: the day's end, or `at` on that day (UTC, so a change made an hour
        ago is before "as of" now); None when that is now or later: the memory as it is."""
        if not day:
            return None
        if at is None:
            return end_of_day(day) if day < datetime.now(UTC).date() else None
        moment = datetime.combine(day, at, tzinfo=UTC)
        return moment.isoformat().replace("+00:00", "Z") if moment < datetime.now(UTC) else None


def as_of_time_field() -> forms.TimeField:
    return forms.TimeField(required=False, label="at (UTC)", error_messages={
        "invalid": "A time is hours and minutes, 14:30 (UTC)."})


class FactFilter(forms.Form):
    """The facts list's filters. One the memory cannot run is an error to show, never dropped: a
    dropped filter lists every fact, and "select all matching" would then offer them all."""

    q = forms.CharField(required=False, label="Search", max_length=MAX_TEXT, strip=False, error_messages={
        "max_length": "A search is at most %(limit_value)s characters, the longest a fact can be; this one has %(show_value)s.",
    })
    type = forms.ChoiceField(choices=[("", "any type"), *TYPE_CHOICES], required=False, error_messages={
        "invalid_choice": "There is no type “%(value)s”: a fact is a fact, a skill or a log.",
    })
    source = forms.CharField(required=False, max_length=MAX_SOURCE, strip=False, error_messages={
        "max_length": "A source is at most %(limit_value)s characters, so no fact has this one of %(show_value)s.",
    })
    client = forms.CharField(required=False, label="Client", max_length=64, strip=False, error_messages={
        "max_length": "A client's name is at most %(limit_value)s characters, so no client has this one of %(show_value)s.",
    })
    source_prefix = forms.CharField(required=False, label="Source starts with", max_length=MAX_SOURCE, strip=False)
    reviewed = forms.CharField(required=False, label="Review")
    order = forms.CharField(required=False)
    cursor = forms.CharField(required=False, max_length=500)
    status = forms.CharField(required=False)
    as_of = AsOfDay(required=False, label="As of")
    as_of_time = as_of_time_field()

    def clean_q(self) -> str:
        return not_blank(self.cleaned_data["q"], "The search")

    def clean_source(self) -> str:
        return not_blank(self.cleaned_data["source"], "The source")

    def clean_client(self) -> str:
        """A client as X-Memory-Client names it: printable ASCII (the memory matches it with or
        without its version)."""
        value = not_blank(self.cleaned_data["client"], "The client")
        if any(not " " <= c <= "~" for c in value):
            raise forms.ValidationError("A client's name is printable ASCII (letters, digits, spaces, punctuation), "
                                        "as it names itself to the memory: no client has this one.", code="client")
        return value

    def clean_source_prefix(self) -> str:
        return self.cleaned_data["source_prefix"].strip()

    def clean_reviewed(self) -> str:
        """unreviewed, reviewed, or any (""): an unknown value is any, as an unknown order is the default."""
        value = self.cleaned_data["reviewed"]
        return value if value in REVIEW_STATES else ""

    def clean_order(self) -> str:
        """An order the list does not know is its default, which the headers then show (the
        filter of what is listed does not change)."""
        order = self.cleaned_data["order"]
        return order if order in ORDERS else ""

    def clean_status(self) -> str:
        """A status the list does not know is its default, as an unknown order is."""
        status = self.cleaned_data["status"]
        return status if status in STATUSES else DEFAULT_STATUS

    def active(self) -> dict[str, str]:
        """The filters that narrow what is listed (q, type, source, client, source_prefix,
        reviewed), of a valid form, as the URL carries them."""
        return {k: self.cleaned_data[k] for k in FILTERS if self.cleaned_data.get(k)}

    def listing(self) -> dict:
        """The same as list_facts takes them: `reviewed` a bool."""
        active = self.active()
        if "reviewed" in active:
            active["reviewed"] = active["reviewed"] == "reviewed"
        return active

    def when(self) -> dict[str, str]:
        """Which facts' lives the list shows, as its links keep it: `status` and `as_of` (a day),
        each only when it is not the default."""
        d = self.cleaned_data
        return {**({"status": d["status"]} if d.get("status", DEFAULT_STATUS) != DEFAULT_STATUS else {}),
                **({"as_of": d["as_of"].isoformat()} if d.get("as_of") else {}),
                **({"as_of_time": d["as_of_time"].strftime("%H:%M")} if d.get("as_of") and d.get("as_of_time") else {})}

    def lifecycle(self) -> dict[str, str | None]:
        """What list_facts takes for them: `status` always (the memory's own default is all),
        `as_of` as the contract's time."""
        return {"status": self.cleaned_data.get("status") or DEFAULT_STATUS,
                "as_of": AsOfDay.time(self.cleaned_data.get("as_of"), self.cleaned_data.get("as_of_time"))}


class RecallForm(forms.Form):
    q = forms.CharField(required=False, label="Query", max_length=32000)
    type = forms.ChoiceField(choices=[("", "any type"), *TYPE_CHOICES], required=False)
    limit = forms.IntegerField(min_value=1, max_value=100, initial=15, required=False)
    pin = forms.IntegerField(min_value=1, max_value=MAX_ID, required=False, label="Where is fact #")
    as_of = AsOfDay(required=False, label="As of")
    as_of_time = as_of_time_field()
    include_stale = forms.BooleanField(required=False, label="replaced and expired facts too")

    def lifecycle(self) -> dict:
        """What recall and explain take: from what was current at the end of `as_of`, or from every fact."""
        return {"as_of": AsOfDay.time(self.cleaned_data.get("as_of"), self.cleaned_data.get("as_of_time")),
                "include_stale": bool(self.cleaned_data.get("include_stale"))}


RESOLUTIONS = {"replace": "New replaces old", "keep_both": "Both true", "keep_old": "Old is right"}


class Validity(forms.Form):
    """A fact page's lifecycle form: replaced by another fact, or valid until the end of a day."""

    superseded_by = forms.IntegerField(min_value=1, max_value=MAX_ID, required=False, label="Replaced by fact #")
    valid_until = forms.DateField(required=False, label="Valid until the end of")


class DuplicateFilter(forms.Form):
    threshold = forms.FloatField(min_value=0.5, max_value=1.0, required=False)
    type = forms.ChoiceField(choices=[("", "any type"), *TYPE_CHOICES], required=False)
