"""Many agents at once (issue 49 §2): what any change to how reads and writes share the memory
must keep. A batch is all or nothing to every reader, even one that asks while it is mid-way;
two writes never interleave; a write's dedup sees every write before it. A batch is paused
mid-way by an event (inside its transaction, after some of its facts are written), never by a
sleep."""

import threading

import pytest

from memories.facts import IdTaken

PAUSE_AFTER = 5  # facts of the batch written when it pauses


def parcels(n: int, start: int = 0) -> list[dict]:
    return [{"text": f"Parcel {k} for flat {k} waits at the depot.", "source": "import"} for k in range(start, start + n)]


@pytest.fixture
def paused(fake_memory, monkeypatch):
    """A batch that stops after PAUSE_AFTER facts, inside its write: (mid_way, go_on). The pause
    gives up after 10 s, so a test that fails never hangs."""
    record = fake_memory.writer.history.record
    mid_way, go_on = threading.Event(), threading.Event()
    written = []

    def record_then_pause(*args, **kwargs):
        entry = record(*args, **kwargs)
        written.append(entry)
        if len(written) == PAUSE_AFTER and not mid_way.is_set():
            mid_way.set()
            go_on.wait(timeout=10)
        return entry

    monkeypatch.setattr(fake_memory.writer.history, "record", record_then_pause)
    yield mid_way, go_on
    go_on.set()


def in_thread(fn, *args, **kwargs) -> tuple[threading.Thread, list]:
    out: list = []

    def run():
        try:
            out.append(fn(*args, **kwargs))
        except Exception as e:  # the test looks at it
            out.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def texts_recalled(memory, query: str) -> set[str]:
    return {r["fact"]["text"] for r in memory.recall(query, limit=50)["results"]}


def test_a_recall_while_a_batch_is_mid_way_sees_all_of_it_or_none(fake_memory, paused):
    mid_way, go_on = paused
    fake_memory.add("The depot closes at six.")
    batch = parcels(10)
    importing, _ = in_thread(fake_memory.add_many, batch, "cli")
    assert mid_way.wait(timeout=10)
    recalling, answer = in_thread(texts_recalled, fake_memory, "parcel flat depot")
    go_on.set()
    importing.join(10)
    recalling.join(10)
    ours = answer[0] & {b["text"] for b in batch}
    assert ours in (set(), {b["text"] for b in batch})
    assert {b["text"] for b in batch} <= texts_recalled(fake_memory, "parcel flat depot")
    assert fake_memory.stats()["consistent"]


def test_a_batch_that_fails_mid_way_stores_none_of_it_for_any_reader(fake_memory, paused):
    mid_way, go_on = paused
    taken = fake_memory.add("The depot closes at six.").fact.id
    batch = parcels(10) + [{"text": "A parcel under a taken id.", "id": taken}]
    importing, failed = in_thread(fake_memory.add_many, batch, "cli")
    assert mid_way.wait(timeout=10)
    recalling, answer = in_thread(texts_recalled, fake_memory, "parcel flat depot")
    go_on.set()
    importing.join(10)
    recalling.join(10)
    assert isinstance(failed[0], IdTaken)
    assert not answer[0] & {b["text"] for b in batch}
    assert fake_memory.count() == 1 and fake_memory.stats()["consistent"]


def test_a_small_write_during_a_batch_lands_after_it_and_its_dedup_sees_the_batch(fake_memory, paused):
    mid_way, go_on = paused
    batch = parcels(10)
    importing, _ = in_thread(fake_memory.add_many, batch, "cli")
    assert mid_way.wait(timeout=10)
    # An agent stores the same fact as the batch's last, which is not written yet.
    writing, added = in_thread(fake_memory.add, batch[-1]["text"], client="agent")
    go_on.set()
    importing.join(10)
    writing.join(10)
    assert added[0].created is False and added[0].match == "exact"
    assert fake_memory.count() == 10


def test_two_batches_at_once_never_interleave(fake_memory):
    start = threading.Barrier(2)

    def batch(client: str, first: int):
        start.wait(timeout=10)
        return fake_memory.add_many(parcels(20, first), client)

    threads = [in_thread(batch, "agent-a", 0), in_thread(batch, "agent-b", 100)]
    for thread, _ in threads:
        thread.join(10)
    clients = [r[0] for r in fake_memory.db.execute("SELECT client FROM history ORDER BY id")]
    assert clients in (["agent-a"] * 20 + ["agent-b"] * 20, ["agent-b"] * 20 + ["agent-a"] * 20)
    for _, out in threads:
        ids = [r.fact.id for r in out[0]]
        assert ids == list(range(ids[0], ids[0] + 20))  # one batch's facts, one after the other
    assert fake_memory.count() == 40 and fake_memory.stats()["consistent"]
