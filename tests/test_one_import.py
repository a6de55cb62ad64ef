"""memories/serving/one_import.py on its own, with a clock the test moves: what holds a memory, and
for how long (the contract tests run both memories over HTTP: test_one_import_contract.py)."""

from __future__ import annotations

import pytest

from memories.serving.one_import import ImportRunning, OneImport


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_batch_in_flight_holds_the_memory_however_long_it_takes():
    clock = Clock()
    one = OneImport(60, clock)
    with one.batch("a", False, "cli", False):
        clock.now += 600  # a slow model
        with pytest.raises(ImportRunning):
            one.check("b")
    clock.now += 59
    with pytest.raises(ImportRunning, match="its last batch 59 s ago"):
        one.check("b")
    clock.now += 1
    one.check("b")  # idle 60 s: free


def test_a_failed_last_batch_does_not_end_the_import_and_a_dry_run_holds_nothing():
    one = OneImport(60, Clock())
    with pytest.raises(ValueError), one.batch("a", True, "cli", False):
        raise ValueError("the batch failed")
    assert one.holder().import_id == "a"
    one.end("b")  # another's end changes nothing
    assert one.holder().import_id == "a"
    one.end("a")
    with one.batch("b", False, "cli", True):
        pass
    assert one.holder() is None
    with one.batch(None, False, "agent", False):  # an ordinary batch: not counted
        pass
    assert one.holder() is None
