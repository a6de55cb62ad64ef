"""A copy of the vector matrix beside the database, so a big memory opens in one read.

The vectors table stays the source of truth, written in the same transaction as every fact.
A snapshot is only a cache: it names the model and the last `vector_changes` entry it
includes, and the engine patches it from that log (state.py `sync`), or loads the table when
the snapshot is missing, damaged, of another model, or older than the log reaches back.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MIN_FACTS = 10_000  # below this the table loads in well under a second: no snapshot


@dataclass
class Snapshot:
    seq: int
    ids: np.ndarray
    types: np.ndarray
    matrix: np.ndarray


def _paths(db: str) -> tuple[Path, Path, Path]:
    return Path(db + ".vectors.npy"), Path(db + ".vectors.ids.npy"), Path(db + ".vectors.json")


def save(db: str, model: str, seq: int, ids: np.ndarray, types: np.ndarray, matrix: np.ndarray) -> None:
    """Each file written beside its final name and renamed into place; the description last,
    so a half-written snapshot never matches it."""
    mpath, ipath, jpath = _paths(db)
    jpath.unlink(missing_ok=True)
    for path, array in ((mpath, matrix), (ipath, np.stack([ids, types.astype(np.int64)], axis=1))):
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as f:
            np.save(f, np.ascontiguousarray(array))
        os.replace(tmp, path)
    about = {"model": model, "dims": int(matrix.shape[1]), "n": int(len(ids)), "seq": int(seq),
             "checksum": int(ids.sum())}
    tmp = jpath.with_name(jpath.name + ".tmp")
    tmp.write_text(json.dumps(about))
    os.replace(tmp, jpath)


def load(db: str, model: str, dims: int) -> Snapshot | None:
    mpath, ipath, jpath = _paths(db)
    try:
        about = json.loads(jpath.read_text())
        if about["model"] != model or about["dims"] != dims:
            return None
        matrix = np.load(mpath, mmap_mode="r")
        both = np.load(ipath)
        if matrix.shape != (about["n"], dims) or len(both) != about["n"] or int(both[:, 0].sum()) != about["checksum"]:
            return None
        return Snapshot(about["seq"], both[:, 0].copy(), both[:, 1].astype(np.int8), matrix)
    except (OSError, ValueError, KeyError, json.JSONDecodeError):
        return None


def remove(db: str) -> None:
    for path in _paths(db):
        path.unlink(missing_ok=True)
