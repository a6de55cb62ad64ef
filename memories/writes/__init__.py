"""What a write does: dedup, what a new fact replaces (what is true now), the proposals it makes, and
the one serialised door every write goes through."""
