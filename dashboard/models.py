from django.db import models


class DismissedPair(models.Model):
    """A near-duplicate pair the owner said is not a duplicate: never shown again."""

    low_id = models.BigIntegerField()
    high_id = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["low_id", "high_id"], name="dismissed_pair_once")]

    @classmethod
    def key(cls, a: int, b: int) -> tuple[int, int]:
        return (a, b) if a < b else (b, a)

    @classmethod
    def dismiss(cls, a: int, b: int) -> None:
        low, high = cls.key(a, b)
        cls.objects.get_or_create(low_id=low, high_id=high)

    @classmethod
    def all_keys(cls) -> set[tuple[int, int]]:
        return set(cls.objects.values_list("low_id", "high_id"))


class EvalCase(models.Model):
    """A question and the fact(s) recall should find for it: one row of an evaluation set."""

    suite = models.CharField(max_length=100, default="mine", db_index=True)
    question = models.TextField()
    expected_ids = models.JSONField(help_text="ids of the facts any of which answers the question")
    type = models.CharField(max_length=10, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["suite", "id"]
        constraints = [models.UniqueConstraint(fields=["suite", "question"], name="eval_case_once_per_suite")]

    def __str__(self) -> str:
        return f"{self.suite}: {self.question}"
