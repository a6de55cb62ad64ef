"""A copy of the vector matrix beside the database, so a big memory opens in one read.

The vectors table stays the source of truth, written in the same transaction as every fact.
A snapshot is only a cache: it names the model and the last `vector_changes` entry it
includes, and the engine patches it from that log (state.py `sync`), or loads the table when
the snapshot is missing, damaged, of another model, or older than the log reaches back.

One file holds everything (ids, types, matrix), with a hash of all three in its header. It is
written under a name of its own and renamed into place once, under a lock, so two processes
saving at once each leave a whole snapshot, never one's ids beside the other's matrix; a file
whose content does not match its hash is not loaded.
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

MIN_FACTS = 10_000  # below this the table loads in well under a second: no snapshot
MAGIC = b"memory-desk vectors 2\n"
OLD_FORM = (".vectors.npy", ".vectors.ids.npy", ".vectors.json")  # three files, before MAGIC's version 2


@dataclass
class Snapshot:
    seq: int
    ids: np.ndarray
    types: np.ndarray
    matrix: np.ndarray


def path_of(db: str) -> Path:
    return Path(db + ".vectors")


def _digest(ids: np.ndarray, types: np.ndarray, matrix: np.ndarray) -> str:
    h = hashlib.blake2b(digest_size=16)
    for array in (ids, types, matrix):
        h.update(memoryview(np.ascontiguousarray(array)).cast("B"))
    return h.hexdigest()


@contextmanager
def _locked(db: str):
    """One saver at a time across processes (the lock file stays; it holds nothing)."""
    with open(db + ".vectors.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def save(db: str, model: str, seq: int, ids: np.ndarray, types: np.ndarray, matrix: np.ndarray) -> None:
    ids = np.ascontiguousarray(ids, dtype="<i8")
    types = np.ascontiguousarray(types, dtype=np.int8)
    matrix = np.ascontiguousarray(matrix, dtype="<f4")
    header = json.dumps({"model": model, "dims": int(matrix.shape[1]), "n": int(len(ids)), "seq": int(seq),
                         "digest": _digest(ids, types, matrix)}).encode() + b"\n"
    final = path_of(db)
    with _locked(db):
        fd, tmp = tempfile.mkstemp(prefix=final.name + ".", suffix=".tmp", dir=final.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC + header)
                for array in (ids, types, matrix):
                    f.write(memoryview(array).cast("B"))
            os.replace(tmp, final)
            for old in OLD_FORM:
                Path(db + old).unlink(missing_ok=True)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def load(db: str, model: str, dims: int) -> Snapshot | None:
    try:
        with open(path_of(db), "rb") as f:
            if f.readline() != MAGIC:
                return None
            about = json.loads(f.readline())
            if about["model"] != model or about["dims"] != dims:
                return None
            n = int(about["n"])
            ids = np.fromfile(f, dtype="<i8", count=n)
            types = np.fromfile(f, dtype=np.int8, count=n)
            matrix = np.fromfile(f, dtype="<f4", count=n * dims)
            if len(ids) != n or len(types) != n or matrix.size != n * dims or f.read(1):
                return None
        matrix = matrix.reshape(n, dims)
        if _digest(ids, types, matrix) != about["digest"]:
            return None
        return Snapshot(int(about["seq"]), ids.astype(np.int64), types, matrix)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remove(db: str) -> None:
    path_of(db).unlink(missing_ok=True)
    for old in OLD_FORM:
        Path(db + old).unlink(missing_ok=True)
