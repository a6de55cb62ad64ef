"""The dashboard's own records. Each belongs to one memory of one memory service: `make run`
and `make run-worker` share this database, and a memory called "default" on the local service is
not the Worker's, so every row carries its service (the MEMORY_URL base it was made against) and
`ServiceRows` hands out only the rows of the service this dashboard serves now."""

from django.db import models


def service_key() -> str:
    """The memory service this dashboard serves: MEMORY_URL without a memory's /memories/NAME."""
    from .memory import service

    return service()


def service_field():
    return models.CharField(max_length=200, default=service_key, db_index=True, editable=False)


class ServiceRows(models.Manager):
    """Every query sees this service's rows only, so no view can forget the filter (and a row
    created through it gets the service from the field's default)."""

    def get_queryset(self):
        return super().get_queryset().filter(service=service_key())


# The memory (by name, as the service and the Worker name them) a row belongs to: ids are per
# memory, so a fact id means nothing without it.
def memory_field():
    return models.CharField(max_length=64, default="default", db_index=True)


class DismissedPair(models.Model):
    """A near-duplicate pair the owner said is not a duplicate: never shown again."""

    service = service_field()
    objects = ServiceRows()
    memory = memory_field()
    low_id = models.BigIntegerField()
    high_id = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["service", "memory", "low_id", "high_id"], name="dismissed_pair_once")]

    @classmethod
    def key(cls, a: int, b: int) -> tuple[int, int]:
        return (a, b) if a < b else (b, a)

    @classmethod
    def dismiss(cls, memory: str, a: int, b: int) -> None:
        low, high = cls.key(a, b)
        cls.objects.get_or_create(memory=memory, low_id=low, high_id=high)

    @classmethod
    def all_keys(cls, memory: str) -> set[tuple[int, int]]:
        return set(cls.objects.filter(memory=memory).values_list("low_id", "high_id"))


class EvalCase(models.Model):
    """A question and the fact(s) recall should find for it: one row of an evaluation set."""

    service = service_field()
    objects = ServiceRows()
    memory = memory_field()
    suite = models.CharField(max_length=100, default="mine", db_index=True)
    question = models.TextField()
    expected_ids = models.JSONField(help_text="ids of the facts any of which answers the question")
    type = models.CharField(max_length=10, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["suite", "id"]
        constraints = [models.UniqueConstraint(fields=["service", "memory", "suite", "question"], name="eval_case_once_per_suite")]

    def __str__(self) -> str:
        return f"{self.suite}: {self.question}"


class AuditEntry(models.Model):
    """One curation action: what was done to which fact, by whom, with the fact before and after.

    A delete's `before` is the whole fact, so the trash can put it back (`undone_at` says it was).
    """

    service = service_field()
    objects = ServiceRows()
    # Before the memory kept its own history, every curation action was recorded here; now only
    # what is not a write to the memory is (a pair kept as two, a case kept from a recall).
    ACTIONS = ["add", "edit", "delete", "restore", "not_duplicate", "import", "eval_case"]

    memory = memory_field()
    at = models.DateTimeField(auto_now_add=True, db_index=True)
    user = models.CharField(max_length=150)
    action = models.CharField(max_length=20, choices=[(a, a) for a in ACTIONS])
    fact_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    note = models.TextField(blank=True, default="")
    undone_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.user} {self.action} #{self.fact_id}"


class EvalRun(models.Model):
    """One run of one set: its metrics per mode under the fusion settings the memory used, so the
    owner can see whether a change helped."""

    service = service_field()
    objects = ServiceRows()
    memory = memory_field()
    at = models.DateTimeField(auto_now_add=True, db_index=True)
    suite = models.CharField(max_length=100, db_index=True)
    fusion = models.JSONField(default=dict, blank=True)
    cases = models.PositiveIntegerField()
    metrics = models.JSONField(help_text="mode -> hit1, hit5, n, mrr")

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.suite}"


class SignInFailures(models.Model):
    """Failed sign-ins per account and per address, counted in the database so every process sees
    them; and the addresses that signed in to an account (views/account.py)."""

    key = models.CharField(max_length=200, unique=True)  # "user:<name>", "addr:<ip>", or "good:<name>|<ip>" (no failures)
    failures = models.PositiveIntegerField(default=0)
    started = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.key}: {self.failures}"


class CreatedMemory(models.Model):
    """A memory the owner created from the dashboard, by name: a Worker cannot list its Durable
    Objects, so the dashboard remembers it for the switcher (a `serve --dir` service lists it too)."""

    service = service_field()
    objects = ServiceRows()
    name = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["service", "name"], name="created_memory_once")]

    def __str__(self) -> str:
        return self.name


class Calibration(models.Model):
    """One calibration run of the memory's model (dashboard/calibration.py): the pairs' cosines
    and, as its steps are run, the evaluation sets' ranks at each expansion cut-off."""

    service = service_field()
    objects = ServiceRows()
    memory = memory_field()  # the owner's memory it was run for (its model: the same service's)
    model = models.CharField(max_length=200)
    at = models.DateTimeField(auto_now_add=True)
    pairs = models.JSONField(help_text="[{kind, a, b, score, distinct}] from the calibration memory")
    loaded = models.JSONField(default=dict, help_text="set -> {fact text: id} in the set's own memory")
    results = models.JSONField(default=dict, help_text="expansion cut-off -> set -> ranks")
    fusion = models.JSONField(default=dict, help_text="the owner's memory's recall settings the cut-offs were tried over")

    class Meta:
        ordering = ["-at", "-id"]


class Account(models.Model):
    """What a person signed in may do at the desk (dashboard/roles.py): an owner changes, a viewer
    reads and debugs. Accounts from before roles were given a row as owners (migration 0011); one
    without a row is an owner if it is a superuser (`ensure_owner`, `createsuperuser`), else a viewer."""

    OWNER, VIEWER = "owner", "viewer"
    ROLES = [(OWNER, "owner: may change"), (VIEWER, "viewer: reads and debugs")]

    user = models.OneToOneField("auth.User", on_delete=models.CASCADE, related_name="desk")
    role = models.CharField(max_length=10, choices=ROLES)

    def __str__(self) -> str:
        return f"{self.user.get_username()}: {self.role}"
