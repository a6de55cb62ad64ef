"""The in-memory index holds int8 codes and answers as exact float32 search does: the same ids
in the same order with the same cosines, every pair at or above a threshold, every fact's rank,
and bytes it counts exactly; its snapshot round-trips, and a snapshot of float32 rows opens."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest

from memories.storage import codes, snapshot
from memories.storage.codes import ROWS, block_sizes, encode
from memories.storage.rows import POOL_BLOCKS, Rows, dict_bytes
from memories.store import Memory
from memories.storage.vectors import TYPE_CODE, TYPES, VectorIndex
from tests.fakes import HashEmbedder


def unit(m: np.ndarray) -> np.ndarray:
    return (m / np.linalg.norm(m, axis=-1, keepdims=True)).astype(np.float32)


def vectors(kind: str, n: int, dims: int, rng: np.random.Generator) -> np.ndarray:
    """Random unit vectors; clusters around 20 centres at spreads from 1e-4 to 0.1 with some
    exact copies (ties); or one crowd, far more rows than search rescores first, closer
    together than the codes can tell apart."""
    if kind == "random":
        return unit(rng.standard_normal((n, dims)))
    if kind == "crowd":
        return unit(rng.standard_normal(dims) + 1e-3 * rng.standard_normal((n, dims)))
    centres = rng.standard_normal((20, dims))
    spread = 10 ** rng.uniform(-4, -1, (n, 1))
    m = unit(centres[rng.integers(0, 20, n)] + spread * rng.standard_normal((n, dims)))
    m[::50] = m[1::50]
    return m


def exact(m: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Exact search's cosines: of float32 vectors, the float32 nearest their dot product (`q`
    one vector, or a matrix whose rows are each compared with every row of `m`)."""
    return (m.astype(np.float64) @ q.astype(np.float64).T).astype(np.float32)


class Table:
    """The vectors table, as the index reads it (any id it holds, in any order)."""

    def __init__(self, ids: np.ndarray, m: np.ndarray):
        self.m, self.row = m, {int(i): k for k, i in enumerate(ids)}

    def read(self, want: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        found = [int(i) for i in want[::-1] if int(i) in self.row]
        return np.array(found, np.int64), self.m[[self.row[i] for i in found]].reshape(len(found), self.m.shape[1])


def index_of(ids: np.ndarray, types: np.ndarray, m: np.ndarray) -> VectorIndex:
    index = VectorIndex(m.shape[1], Table(ids, m).read)
    index.extend(ids, types, *encode(m))
    return index


@pytest.fixture(params=[("random", 384), ("clustered", 384), ("clustered", 16), ("crowd", 64)], ids=lambda p: f"{p[0]}-{p[1]}")
def data(request):
    kind, dims = request.param
    rng = np.random.default_rng(7)
    n = 3000
    m = vectors(kind, n, dims, rng)
    ids = rng.choice(2**62, n, replace=False).astype(np.int64) + 1  # ids are not row numbers
    types = rng.choice(3, n, p=[0.8, 0.15, 0.05]).astype(np.int8)
    queries = [unit(m[i] + s * rng.standard_normal(dims)) for i, s in zip(rng.integers(0, n, 40), [0, 0.01, 0.1, 1] * 10)]
    return ids, types, m, queries, rng, kind


def test_search_on_codes_then_rescored_is_exact_search(data, monkeypatch):
    ids, types, m, queries, rng, kind = data
    index = index_of(ids, types, m)
    reads = []
    monkeypatch.setattr(index, "read", lambda want: reads.append(len(want)) or Table(ids, m).read(want))
    again = 0
    for q in queries:
        ref = exact(m, q)
        for type, k in ((None, 30), ("fact", 30), ("skill", 5), ("log", 100)):
            exclude = int(ids[rng.integers(len(ids))])
            mine = np.flatnonzero(((types == TYPE_CODE[type]) if type else True) & (ids != exclude))
            best = mine[np.lexsort((ids[mine], -ref[mine]))][:k]
            reads.clear()
            assert index.search(q, type, k, exclude=exclude) == [(int(ids[i]), float(ref[i])) for i in best]
            again += len(reads) > 1
    # In a crowd the best k + RESCORE on the codes cannot hold the exact top k: more are rescored;
    # among random vectors they always do.
    assert again > 0 if kind in ("crowd", "clustered") else again == 0


def test_threshold_queries_find_every_row_exact_search_finds_even_right_at_the_threshold(data):
    ids, types, m, queries, rng, kind = data
    index = index_of(ids, types, m)
    batch = np.array(queries[:8])
    for t in TYPES:
        mine = np.flatnonzero(types == TYPE_CODE[t])
        ref = exact(m[mine], batch)
        for least in (0.3, 0.8, *(float(np.sort(ref[:, k])[-r]) for k, r in ((0, 2), (1, 10), (2, 50)))):
            for q, cosines, (got, s), (one, s1) in zip(batch, ref.T, index.near(batch, t, least),
                                                       (index.near(q, t, least)[0] for q in batch)):
                want = cosines >= least  # as exact search compares: float32 against the threshold
                assert dict(zip(got.tolist(), s.tolist())) == dict(zip(ids[mine][want].tolist(), cosines[want].tolist()))
                assert dict(zip(one.tolist(), s1.tolist())) == dict(zip(got.tolist(), s.tolist()))
    exclude = int(ids[types == 0][0])
    assert exclude not in index.near(m[ids == exclude][0], "fact", 0.0, exclude=exclude)[0][0]


def test_every_pair_at_or_above_the_threshold_and_none_below(data, monkeypatch):
    ids, types, m, _, rng, _ = data
    index = index_of(ids, types, m)
    monkeypatch.setattr("memories.storage.allpairs.BLOCK", 256)  # many tiles, most skipped
    for t in TYPES:
        mine = np.flatnonzero(types == TYPE_CODE[t])
        ref = exact(m[mine], m[mine])
        i, j = np.triu_indices(len(mine), 1)
        best = np.sort(ref[i, j])[::-1]
        many, ten, some = best[np.minimum([50_000, 10, 3000], len(best)) - 1].tolist()  # the k-th best pair's cosine
        for threshold in (max(0.9, many), ten, some):  # two right at a pair's cosine
            keep = ref[i, j] >= threshold
            a, b = ids[mine][i[keep]], ids[mine][j[keep]]
            want = dict(zip(zip(np.minimum(a, b).tolist(), np.maximum(a, b).tolist()), ref[i, j][keep].tolist()))
            s, a, b = index.pairs(t, threshold)
            assert dict(zip(zip(a.tolist(), b.tolist()), s.tolist())) == want and len(s) == len(want)


def test_a_rank_is_the_place_exact_search_gives(data):
    ids, types, m, queries, rng, kind = data
    index = index_of(ids, types, m)
    for q in queries[:10]:
        ref = exact(m, q)
        for k in rng.integers(0, len(ids), 5):
            for type in (None, TYPES[types[k]], TYPES[(types[k] + 1) % 3]):
                mine = np.flatnonzero((types == TYPE_CODE[type]) if type else np.ones(len(ids), bool))
                order = mine[np.lexsort((ids[mine], -ref[mine]))]  # search's order: ties by id
                want = (int(np.flatnonzero(order == k)[0]) + 1, float(ref[k])) if k in mine else (None, float(ref[k]))
                assert index.rank_of(q, int(ids[k]), type) == want


def near(u: np.ndarray, c, rng: np.random.Generator) -> np.ndarray:
    """Unit vectors at cosine `c` (one a row) with unit `u`, in random directions."""
    c = np.atleast_1d(c)[:, None]
    w = rng.standard_normal((len(c), len(u)))
    return unit(c * u + np.sqrt(1 - c * c) * unit(w - np.outer(w @ u, u)))


def crowd(kind: str, n: int, dims: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(a centre, n rows) closer together than the int8 codes can tell apart: near copies of
    one vector, one large component shared by all, or near copies with 86 of them one vector."""
    base = unit(rng.standard_normal(dims))
    if kind == "near copies":
        return base, near(base, 0.95 + 0.002 * rng.random(n), rng)
    if kind == "shared component":
        return base, unit(3 * np.sqrt(dims) * base + rng.standard_normal((n, dims)))
    m = near(base, 0.95 + 0.0005 * rng.random(n), rng)
    m[200:800:7] = m[1500]
    return base, m


@pytest.mark.parametrize("dims", [384, 768])
@pytest.mark.parametrize("kind", ["near copies", "shared component", "exact ties"])
def test_in_a_crowd_search_and_rank_are_exact_search(kind, dims, monkeypatch):
    rng = np.random.default_rng(3)
    n = 2000
    base, m = crowd(kind, n, dims, rng)
    ids = rng.choice(2**62, n, replace=False).astype(np.int64) + 1
    types = rng.choice(3, n, p=[0.8, 0.15, 0.05]).astype(np.int8)
    index = index_of(ids, types, m)
    reads = []
    monkeypatch.setattr(index, "read", lambda want: reads.append(len(want)) or Table(ids, m).read(want))
    again = 0
    for q in (base, m[1500], near(base, 0.99, rng)[0], near(m[5], 0.999, rng)[0]):
        ref = exact(m, q)
        for type in (None, "fact"):
            mine = np.flatnonzero((types == TYPE_CODE[type]) if type else np.ones(n, bool))
            best = mine[np.lexsort((ids[mine], -ref[mine]))][:30]
            reads.clear()
            assert index.search(q, type, 30) == [(int(ids[i]), float(ref[i])) for i in best]
            again += len(reads) > 1
            for p in (0, 1, 14, 29):
                assert index.rank_of(q, int(ids[best[p]]), type) == (p + 1, float(ref[best[p]]))
    assert again > 0  # a crowd for the codes: the best k + RESCORE on them did not settle it
    ref = exact(m, m[7])  # a fact's neighbours: itself left out
    others = np.flatnonzero(ids != ids[7])
    best = others[np.lexsort((ids[others], -ref[others]))][:20]
    assert index.search(m[7], None, 20, exclude=int(ids[7])) == [(int(ids[i]), float(ref[i])) for i in best]


def test_equal_cosines_rank_by_id_as_search_orders_them():
    ids = np.array([9, 3, 7, 1, 5, 2, 4], np.int64)
    m = unit(np.array([[1, 1, 0]] * 5 + [[1, 0, 0], [1, 1, 0]], np.float32))
    index = index_of(ids, np.array([0] * 6 + [1], np.int8), m)  # 4: a skill
    q = m[0]
    order = [i for i, _ in index.search(q, "fact", 10)]
    assert order == [1, 3, 5, 7, 9, 2]
    assert [index.rank_of(q, i, "fact")[0] for i in order] == [1, 2, 3, 4, 5, 6]
    assert index.rank_of(q, 5, None)[0] == 4  # the skill (id 4) ties too, before 5


def test_a_hidden_fact_stays_out_when_the_table_holds_fewer_than_k():
    """With fewer than k rescored (vectors missing from the table), every row that could still
    be in the top is rescored: the hidden ones are not among them."""
    rng = np.random.default_rng(5)
    n = 200
    m = unit(rng.standard_normal((n, 32)))
    ids = np.arange(1, n + 1, dtype=np.int64)
    index = VectorIndex(32, Table(ids[:20], m[:20]).read)  # the table lacks 180 of them
    index.extend(ids, np.zeros(n, np.int8), *encode(m))
    hidden = tuple(range(1, 11))
    found = [i for i, _ in index.search(m[0], "fact", 30, hidden=hidden)]
    assert found == sorted(range(11, 21), key=lambda i: -float(exact(m[i - 1 : i], m[0])[0]))  # the held, not hidden


def test_without_the_bound_the_codes_alone_would_miss_rows(monkeypatch):
    """The threshold test above can fail: with no bound, rows just over the threshold are lost."""
    rng = np.random.default_rng(1)
    m = vectors("clustered", 2000, 384, rng)
    ids = np.arange(1, 2001, dtype=np.int64)
    index = index_of(ids, np.zeros(2000, np.int8), m)
    monkeypatch.setattr("memories.storage.vectors.bound", lambda params, q1, q2, dims, r1: np.zeros(np.broadcast_shapes(np.shape(params)[:-1], np.shape(q1))))
    missed = 0
    for q in m[:50]:
        least = float(np.sort(exact(m, q))[-20])
        missed += 20 - len(index.near(q, "fact", least)[0][0])
    assert missed > 0


@pytest.mark.parametrize("n", [1, 63, 65, ROWS + 7, POOL_BLOCKS * ROWS + 100])
def test_a_scan_scores_each_row_as_its_decoded_code_within_the_query_codes_bound(n):
    """Each row's score is its decoded code's dot with the query, give or take what the query as
    integers leaves out (codes.bound's 127·step·r1), on either side of a block's edge, on one
    thread or the pool's."""
    rng = np.random.default_rng(n)
    rows = Rows(64)
    rows.extend(np.arange(n, dtype=np.int64), *encode(unit(rng.standard_normal((n, 64)))))
    q = unit(rng.standard_normal(64))
    decoded = np.concatenate([codes.decode(c, p, np.empty((len(c), 64), np.float32)) for _, c, p in rows.blocks()])
    step = np.concatenate([p[:, 1] for _, _, p in rows.blocks()]).astype(np.float64)
    r1 = codes.query_code(q)[2]
    gap = np.abs(rows.scores(q) - decoded.astype(np.float64) @ q)
    assert (gap <= codes.LEVELS * step * r1 + 1e-6).all()
    assert 0 < r1 < 1e-3  # 15 bits a dimension: the query term is a small part of the bound
    assert rows.pooled == (n > POOL_BLOCKS * ROWS)  # the pool's, and so recall's scan beside its keyword list


def test_a_query_as_integers_is_the_query_within_what_it_leaves_out():
    rng = np.random.default_rng(5)
    for q in [unit(rng.standard_normal(384)), np.zeros(384, np.float32), np.eye(384, dtype=np.float32)[7] * -0.3]:
        code, scale, r1 = codes.query_code(q)
        hi, lo = code.astype(np.int64)
        assert code.dtype == np.int8 and np.abs(hi).max() <= 127 and np.abs(lo).max() <= 64
        assert np.abs(q.astype(np.float64) - scale * (128 * hi + lo)).sum() <= r1
    queries = unit(rng.standard_normal((3, 384)))  # a batch: each row as it would be alone
    np.testing.assert_array_equal(codes.query_code(queries)[2], [codes.query_code(q)[2] for q in queries])


def test_the_bytes_counted_are_the_arrays_held_and_growing_never_holds_twice_as_much():
    rows = Rows(384)
    rng = np.random.default_rng(3)
    m = unit(rng.standard_normal((3 * ROWS + 100, 384)))
    rows.extend(np.arange(len(m), dtype=np.int64), *encode(m))
    for fid in rng.choice(len(m), 300, replace=False).tolist():
        rows.remove(fid)
    arrays = sum(c.nbytes for c in rows.codes) + sum(p.nbytes for p in rows.params) + rows.ids.nbytes
    assert arrays == len(rows.ids) * (384 + 12 + 8) == sum(block_sizes(len(m))) * (384 + 12 + 8)
    assert rows.nbytes() == arrays + dict_bytes(rows.row)
    code, params = encode(m[:1])
    grows = 0
    for fid in range(10**6, 10**6 + ROWS):  # through doublings of the last block, and a new block
        bound, growing = rows.nbytes_with(1), rows.n == len(rows.ids)
        if growing:
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
        rows.put(fid, code[0], params[0])
        assert rows.nbytes() <= bound
        if growing:
            peak = tracemalloc.get_traced_memory()[1] - before
            tracemalloc.stop()
            assert peak <= ROWS * (384 + 12) + 2 * rows.ids.nbytes + 4096  # a block and the ids at most
            assert peak < rows.nbytes() / 2  # never a copy of the whole
            grows += 1
    assert grows >= 2 and rows.n == len(m) - 300 + ROWS


def test_the_engine_answers_as_exact_search_over_its_table(tmp_path):
    memory = Memory(tmp_path / "m.db", HashEmbedder(16))
    try:
        words = "tea jazz chess Lisbon Anna brother sister moved works loves hates boat".split()
        rng = np.random.default_rng(5)
        memory.add_many([{"text": " ".join(rng.choice(words, 4)) + f" note{i % 40}", "type": TYPES[i % 3]} for i in range(1500)])
        rows = memory.db.execute("SELECT f.id, f.type, v.embedding FROM facts f JOIN vectors v ON v.fact_id = f.id").fetchall()
        ids = np.array([r[0] for r in rows])
        m = np.array([np.frombuffer(r[2], "<f4") for r in rows])
        for text in ("tea and jazz", "Anna moved", "note7 boat"):
            q = memory.embedder.embed([text])[0]
            ref = exact(m, q)
            best = np.lexsort((ids, -ref))[:30]
            with memory.state.reading():
                assert memory.vectors.search(q, None, 30) == [(int(ids[i]), float(ref[i])) for i in best]
                assert memory.vectors.rank_of(q, int(ids[best[7]])) == (8, float(ref[best[7]]))
    finally:
        memory.close()


def seeded(db: str, n: int = 120) -> Memory:
    m = Memory(db, HashEmbedder(16))
    m.add_many([{"text": f"Fact {i} about shelf {i * 7}, box {i * 13} and tea.", "type": TYPES[i % 3]} for i in range(n)])
    return m


def answers(memory: Memory) -> list:
    with memory.state.reading():
        return [memory.vectors.search(memory.embedder.embed([t])[0], None, 10) for t in ("shelf 7", "box tea", "Fact 3")]


def test_the_snapshot_round_trips_the_codes(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshot, "MIN_FACTS", 1)
    db = str(tmp_path / "m.db")
    first = seeded(db)
    before, held = answers(first), first.vectors
    first.close()
    loaded = snapshot.load(db, HashEmbedder.model_id, 16)
    assert loaded is not None
    for t in TYPES:
        part, (codes_, params) = held.parts[t], loaded.blocks[t]
        assert [len(c) for c in codes_] == block_sizes(part.n)
        assert all(np.array_equal(a[: len(b)], b) for a, (_, b, _) in zip(codes_, part.blocks()))
        assert all(np.array_equal(a[: len(b)], b) for a, (_, _, b) in zip(params, part.blocks()))
    monkeypatch.setattr("memories.storage.state.VectorIndex.of", lambda *a: pytest.fail("read the table"))
    again = Memory(db, HashEmbedder(16))
    assert answers(again) == before and again.stats()["consistent"]
    again.close()


def test_a_snapshot_without_the_databases_identity_is_not_loaded_and_is_written_anew(tmp_path, monkeypatch):
    # One from before identities (or another tool's): which database it came from is not known.
    monkeypatch.setattr(snapshot, "MIN_FACTS", 1)
    db = str(tmp_path / "m.db")
    first = seeded(db)
    before = answers(first)
    first.close()
    path = snapshot.path_of(db)
    magic, header, rest = path.read_bytes().split(b"\n", 2)
    about = json.loads(header)
    del about["origin"]
    path.write_bytes(magic + b"\n" + json.dumps(about).encode() + b"\n" + rest)
    assert snapshot.load(db, HashEmbedder.model_id, 16) is None
    again = Memory(db, HashEmbedder(16))
    assert answers(again) == before and again.state.reread == len(again.vectors) and again.stats()["consistent"]
    again.close()
    assert snapshot.load(db, HashEmbedder.model_id, 16).origin


def test_a_code_is_within_its_bound_of_the_exact_cosine():
    rng = np.random.default_rng(9)
    for dims in (16, 384, 1536):
        m = np.concatenate([vectors("random", 200, dims, rng), np.full((1, dims), 1 / np.sqrt(dims), np.float32)])
        c, params = encode(m)
        decoded = params[:, :1] + params[:, 1:2] * c.astype(np.float64)
        assert np.all(np.linalg.norm(m - decoded, axis=1) <= params[:, 2])
        assert np.all(np.abs(c) <= codes.LEVELS)


def holds_the_band(got: np.ndarray, s: np.ndarray, ids: np.ndarray, ref: np.ndarray, lower: float, least: float,
                   hidden: list[int], k: int = 3) -> None:
    """`near`'s answer with `top` (lower, k, hidden) for one query, against brute force (`ref`, the
    exact cosines of `ids`): every row at or over `least`, and of those between `lower` and
    `least` (the hidden left out) exactly the k best and any tied with the k-th, each with its
    exact cosine."""
    found = dict(zip(got.tolist(), s.tolist()))
    over = ref >= least
    assert all(found[i] == c for i, c in zip(ids[over].tolist(), ref[over].tolist()))
    between = (ref >= lower) & (ref < least) & ~np.isin(ids, hidden)
    cut = np.sort(ref[between])[-k] if between.sum() >= k else lower
    band = {int(i): float(c) for i, c in zip(ids[between & (ref >= cut)], ref[between & (ref >= cut)])}
    assert {i: c for i, c in found.items() if c < least} == band


def test_near_with_a_top_band_holds_every_row_over_least_and_the_exact_k_best_below(data):
    """A write's proposals (`near`'s `top`): every row at or over `least` as before, and of those
    between `lower` and `least` (the hidden left out) at least the exact k best, as brute force
    finds them, with their exact cosines."""
    ids, types, m, queries, rng, kind = data
    index = index_of(ids, types, m)
    mine = np.flatnonzero(types == 0)
    for q in queries:
        ref = exact(m[mine], q)
        hidden = [int(i) for i in ids[mine][rng.choice(len(mine), 40, replace=False)]]
        lower, least = float(np.sort(ref)[-60]), float(np.sort(ref)[-5])
        holds_the_band(*index.near(q, "fact", least, top=(lower, 3, hidden))[0], ids[mine], ref, lower, least, hidden)


def test_a_batch_near_with_a_top_band_holds_for_each_query_what_one_query_finds(data):
    """A batch's writes share one scan (`near` with several queries and `top`): for each query
    what one query's `top` holds, and the very rows and cosines of that query asked alone."""
    ids, types, m, queries, rng, kind = data
    index = index_of(ids, types, m)
    mine = np.flatnonzero(types == 0)
    hidden = [int(i) for i in ids[mine][rng.choice(len(mine), 40, replace=False)]]
    refs = [exact(m[mine], q) for q in queries]
    lower, least = float(np.median([np.sort(r)[-60] for r in refs])), float(np.median([np.sort(r)[-5] for r in refs]))
    batch = index.near(queries, "fact", least, top=(lower, 3, hidden))
    assert len(batch) == len(queries)

    for q, ref, (got, s) in zip(queries, refs, batch):
        holds_the_band(got, s, ids[mine], ref, lower, least, hidden)
        alone, alone_s = index.near(q, "fact", least, top=(lower, 3, hidden))[0]
        assert sorted(zip(got.tolist(), s.tolist())) == sorted(zip(alone.tolist(), alone_s.tolist()))
