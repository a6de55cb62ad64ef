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
