"""A copy of the in-memory codes beside the database, so a big memory opens in one read.

The vectors table stays the source of truth, written in the same transaction as every fact.
A snapshot is only a cache: it names the model and the last `vector_changes` entry it
includes, and the engine patches it from that log (state.py `sync`), or loads the table when
the snapshot is missing, damaged, of another model, older than the log reaches back, or
made from another database: it carries the database's identity (`meta.memory_id`, random,
written once), so another file put at the database's path never gets this one's codes.

One file holds everything (ids, types, each row's mid, step and err, and the int8 codes, rows
grouped by type), with a hash of all of it in its header. It is written under a name of its
own and renamed into place once, under a lock, so two processes saving at once each leave a
whole snapshot, never one's ids beside the other's codes; a file whose content does not match
its hash is not loaded. It is read a block at a time straight into the index's blocks. Older
snapshots (float32 rows, or codes without the database's identity) are not loaded: the memory
reads its table once and writes a snapshot that has it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .codes import PARAMS, ROWS, block_sizes
from .vectors import TYPES

MIN_FACTS = 10_000  # below this the table loads in well under a second: no snapshot
MAGIC = b"memory-desk vectors 3\n"
OLD_FORM = (".vectors.npy", ".vectors.ids.npy", ".vectors.json")  # three files, before version 2


@dataclass
class Snapshot:
    seq: int
    ids: np.ndarray  # ordered by type
    types: np.ndarray
    blocks: dict[str, tuple[list[np.ndarray], list[np.ndarray]]]  # each type's codes and params, block by block
    origin: str | None  # the identity of the database it was made from (meta.memory_id)


def path_of(db: str) -> Path:
    return Path(db + ".vectors")


@contextmanager
def _locked(db: str):
    """One saver at a time across processes (the lock file stays; it holds nothing)."""
    with open(db + ".vectors.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def save(db: str, model: str, seq: int, dims: int, ids: np.ndarray, types: np.ndarray,
         params: list[np.ndarray], codes: list[np.ndarray], origin: str) -> None:
    """`params` and `codes` are the rows' blocks in the order of `ids` (grouped by type); `origin`
    is the database's identity, which the one loading it must have."""
    arrays = [np.ascontiguousarray(ids, dtype="<i8"), np.ascontiguousarray(types, dtype=np.int8),
              *(np.ascontiguousarray(p, dtype="<f4") for p in params), *(np.ascontiguousarray(c, dtype=np.int8) for c in codes)]
    _write(db, path_of(db), MAGIC, {"model": model, "dims": int(dims), "n": int(len(ids)), "seq": int(seq), "origin": origin}, arrays)
    for old in OLD_FORM:
        Path(db + old).unlink(missing_ok=True)


def _write(db: str, final: Path, magic: bytes, about: dict, arrays: list[np.ndarray]) -> None:
    """`magic`, `about` with the arrays' hash, then the arrays, written whole under another name
    and renamed into place (under the lock)."""
    h = hashlib.blake2b(digest_size=16)
    for array in arrays:
        h.update(memoryview(array).cast("B"))
    header = json.dumps(about | {"digest": h.hexdigest()}).encode() + b"\n"
    with _locked(db):
        fd, tmp = tempfile.mkstemp(prefix=final.name + ".", suffix=".tmp", dir=final.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(magic + header)
                for array in arrays:
                    f.write(memoryview(array).cast("B"))
            os.replace(tmp, final)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _read(f, h, dtype, count: int) -> np.ndarray:
    """`count` values from the file, into the hash; a short file is a ValueError."""
    array = np.fromfile(f, dtype=dtype, count=count)
    if array.size != count:
        raise ValueError("the snapshot ends early")
    h.update(memoryview(array).cast("B"))
    return array


def _blocks(f, h, params: np.ndarray, dims: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The codes of the rows `params` are of, read from the file, and both laid out in blocks as
    codes.block_sizes says (the rows' index takes them as they are)."""
    codes, params_of = [], []
    for b, size in enumerate(block_sizes(len(params))):
        k = min(size, len(params) - b * ROWS)
        codes.append(np.zeros((size, dims), dtype=np.int8))
        params_of.append(np.zeros((size, PARAMS), dtype=np.float32))
        codes[-1][:k] = _read(f, h, np.int8, k * dims).reshape(k, dims)
        params_of[-1][:k] = params[b * ROWS : b * ROWS + k]
    return codes, params_of


def load(db: str, model: str, dims: int) -> Snapshot | None:
    try:
        with open(path_of(db), "rb") as f:
            form = f.readline()
            if form != MAGIC:
                return None
            about = json.loads(f.readline())
            if about["model"] != model or about["dims"] != dims or not about.get("origin"):
                return None
            n = int(about["n"])
            h = hashlib.blake2b(digest_size=16)
            ids, types = _read(f, h, "<i8", n), _read(f, h, np.int8, n)
            if n and (np.any(np.diff(types) < 0) or types[0] < 0 or types[-1] >= len(TYPES)):
                return None  # every snapshot is written grouped by type
            params = _read(f, h, "<f4", n * PARAMS).reshape(n, PARAMS)
            blocks, start = {}, 0
            for code, t in enumerate(TYPES):
                count = int((types == code).sum())
                blocks[t] = _blocks(f, h, params[start : start + count], dims)
                start += count
            if f.read(1) or h.hexdigest() != about["digest"]:
                return None
        return Snapshot(int(about["seq"]), ids.astype(np.int64), types, blocks, about["origin"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


# The vocabulary's codes (vocabulary.py), in a file of their own: its words come and go with
# other writes than the vectors', and a memory's words may outnumber its facts. It holds the
# table ids of the words it has (all those of its model up to `last`) and their codes, block by
# block; `epoch` is the words table's (meta.words_epoch, moved by every delete from it), so a
# snapshot from before a word was dropped is never loaded.
WORDS_MAGIC = b"memory-desk words 1\n"


@dataclass
class WordsSnapshot:
    last: int
    ids: np.ndarray
    codes: list[np.ndarray]
    params: list[np.ndarray]


def words_path_of(db: str) -> Path:
    return Path(db + ".words")


def save_words(db: str, model: str, dims: int, last: int, epoch: str, origin: str, ids: np.ndarray,
               params: list[np.ndarray], codes: list[np.ndarray]) -> None:
    arrays = [np.ascontiguousarray(ids, dtype="<i8"), *(np.ascontiguousarray(p, dtype="<f4") for p in params),
              *(np.ascontiguousarray(c, dtype=np.int8) for c in codes)]
    about = {"model": model, "dims": int(dims), "n": int(len(ids)), "last": int(last), "epoch": epoch, "origin": origin}
    _write(db, words_path_of(db), WORDS_MAGIC, about, arrays)


def load_words(db: str, model: str, dims: int, epoch: str, origin: str) -> WordsSnapshot | None:
    try:
        with open(words_path_of(db), "rb") as f:
            if f.readline() != WORDS_MAGIC:
                return None
            about = json.loads(f.readline())
            if (about["model"], about["dims"], about["epoch"], about["origin"]) != (model, dims, epoch, origin):
                return None
            n = int(about["n"])
            h = hashlib.blake2b(digest_size=16)
            ids = _read(f, h, "<i8", n)
            params = _read(f, h, "<f4", n * PARAMS).reshape(n, PARAMS)
            codes, params_of = _blocks(f, h, params, dims)
            if f.read(1) or h.hexdigest() != about["digest"]:
                return None
        return WordsSnapshot(int(about["last"]), ids.astype(np.int64), codes, params_of)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remove(db: str) -> None:
    path_of(db).unlink(missing_ok=True)
    words_path_of(db).unlink(missing_ok=True)
    for old in OLD_FORM:
        Path(db + old).unlink(missing_ok=True)
