"""In-memory search indexes over numbered rows: dense vectors (cosine) and BM25 over tokens.

Rows are assigned by the caller and never move; removing one only marks it dead, so a
search never pays for bookkeeping. Both are rebuilt from the documents at start.

A full scan of the vectors reads every row's every number, and at a year of turns that is
hundreds of megabytes a query. The built-in hashed embedder's vectors are mostly zeros
(about 40 of 384 numbers set), so the rows written so far are also kept by column (each
dimension's rows and values): a query then reads only the columns its own vector sets, a
tenth of the numbers, and the scores are the same sums. The column copy is made once the
vectors prove sparse, and extended when the rows written after it reach an eighth of it:
only those rows are cut into columns, and the old columns are copied, never sorted again.
Rows written after the copy, or rewritten under it, are scanned whole. Dense vectors (a
model's) are always scanned whole: by column they would cost more.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Rows = npt.NDArray[np.int64]
Scores = npt.NDArray[np.float32]


#: Rows a full scan reads before a column copy is worth making and keeping.
SEALED_MIN_ROWS = 4096
#: Most share of a vector's numbers set for the column copy to be cheaper than a scan.
SPARSE_SHARE = 0.25


class _Columns:
    """The rows below `rows` by column: for each dimension, the rows that set it and the
    values they set (concatenated, cut by `starts`)."""

    def __init__(
        self,
        rows: int,
        row: npt.NDArray[np.int32],
        value: npt.NDArray[np.float32],
        starts: npt.NDArray[np.int64],
    ) -> None:
        self.rows, self.row, self.value, self.starts = rows, row, value, starts

    @classmethod
    def of(cls, block: npt.NDArray[np.float32], first: int = 0) -> _Columns:
        """The rows of `block`, numbered from `first`, by column."""
        set_ = block != 0
        value = block[set_]
        row, dim = np.nonzero(set_)  # by row, then dimension
        order = np.argsort(dim.astype(np.int16), kind="stable")  # a radix sort
        starts = np.searchsorted(dim[order], np.arange(block.shape[1] + 1))
        return cls(first + len(block), (row[order] + first).astype(np.int32), value[order], starts)

    def extended(self, block: npt.NDArray[np.float32]) -> _Columns:
        """These columns with the rows of `block` after them: the new rows are cut into
        columns alone, and each column's old entries are copied, never sorted again."""
        new = _Columns.of(block, self.rows)
        old_starts, new_starts = self.starts.tolist(), new.starts.tolist()
        starts = self.starts + new.starts
        row = np.empty(int(starts[-1]), np.int32)
        value = np.empty(int(starts[-1]), np.float32)
        # Column by column, as slices: a copy each (tens of ms for a year of rows), where
        # an index of every entry to scatter them through took a quarter of a second.
        at = starts.tolist()
        for d in range(len(at) - 1):
            old_from, old_to = old_starts[d], old_starts[d + 1]
            middle = at[d] + old_to - old_from
            row[at[d] : middle] = self.row[old_from:old_to]
            value[at[d] : middle] = self.value[old_from:old_to]
            row[middle : at[d + 1]] = new.row[new_starts[d] : new_starts[d + 1]]
            value[middle : at[d + 1]] = new.value[new_starts[d] : new_starts[d + 1]]
        return _Columns(new.rows, row, value, starts)

    def scores(self, query: npt.NDArray[np.float32]) -> Scores:
        """Each row's dot product with `query`, the sum over the dimensions it sets. The
        columns it reads are copied out slice by slice: an index of every entry to gather
        them by cost twice as much at 200k rows. bincount is handed the types it counts
        in (it converts anything else by a path several times slower than astype)."""
        starts = self.starts.tolist()
        used = np.flatnonzero(query).tolist()
        if not used:
            return np.zeros(self.rows, np.float32)
        rows = np.concatenate([self.row[starts[d] : starts[d + 1]] for d in used])
        weights = np.concatenate([self.value[starts[d] : starts[d + 1]] * query[d] for d in used])
        counted = np.bincount(rows.astype(np.intp), weights.astype(np.float64), minlength=self.rows)
        return counted.astype(np.float32)


class VectorIndex:
    def __init__(self, dim: int, capacity: int = 1024) -> None:
        self.dim = dim
        self._matrix = np.zeros((capacity, dim), dtype=np.float32)
        self._valid = np.zeros(capacity, dtype=bool)
        self.size = 0  # rows in use, dead ones included
        self._columns: _Columns | None = None
        # Rows below the column copy's end written since it was made: scanned whole.
        self._changed: set[int] = set()
        self._set = 0  # numbers set in the vectors written, and how many were written
        self._written = 0

    def reserve(self, rows: int) -> None:
        """Make room for `rows` rows at once: a load that knows how many it will add grows
        the matrix once (its pages are taken as rows are written), not by a copy of every
        row at each doubling."""
        self._grow(rows)

    def _grow(self, needed: int) -> None:
        capacity = len(self._valid)
        if needed <= capacity:
            return
        while capacity < needed:
            capacity *= 2
        matrix = np.zeros((capacity, self.dim), dtype=np.float32)
        matrix[: self.size] = self._matrix[: self.size]
        valid = np.zeros(capacity, dtype=bool)
        valid[: self.size] = self._valid[: self.size]
        self._matrix, self._valid = matrix, valid

    def set(self, row: int, vector: npt.NDArray[np.float32] | None) -> None:
        """Put `vector` at `row`; None leaves the row out of every search."""
        self._grow(row + 1)
        self.size = max(self.size, row + 1)
        if vector is None:
            self._valid[row] = False
            return
        if self._valid[row] and np.array_equal(self._matrix[row], vector):
            return  # a turn moving on keeps its vector: the column copy still holds it
        self._matrix[row] = vector
        self._valid[row] = True
        self._set += int(np.count_nonzero(vector))
        self._written += 1
        if self._columns is not None and row < self._columns.rows:
            self._changed.add(row)

    def set_many(
        self, rows: Sequence[int], vectors: Sequence[npt.NDArray[np.float32] | None]
    ) -> None:
        """`set` each of `rows` to its vector; rows past the end (a boot indexing every
        stored turn) are written without `set`'s checks, which are for rows in use."""
        if not rows:
            return
        end = self.size
        self._grow(max(rows) + 1)
        self.size = max(self.size, max(rows) + 1)
        for row, vector in zip(rows, vectors, strict=True):
            if row < end:
                self.set(row, vector)
            elif vector is None:
                self._valid[row] = False
            else:
                self._matrix[row] = vector
                self._valid[row] = True
                self._set += int(np.count_nonzero(vector))
                self._written += 1

    def remove(self, row: int) -> None:
        if row < self.size:
            self._valid[row] = False

    @property
    def by_column(self) -> int:
        """Rows the column copy covers now (0: every search scans the rows whole)."""
        return 0 if self._columns is None else self._columns.rows

    @property
    def rescanned(self) -> int:
        """Rows under the column copy that changed since it was made: each search reads
        them whole."""
        return len(self._changed)

    def seal(self) -> None:
        """Bring the column copy up to date, as a search would first: a load calls it
        after each batch, so the search after it does not copy a year of rows (1.4 s at
        200k)."""
        columns = self._columns
        sparse = self._set <= SPARSE_SHARE * self.dim * self._written
        if sparse and self.size >= SEALED_MIN_ROWS:
            if columns is None:
                self._columns = _Columns.of(self._matrix[: self.size])
                self._changed = set()
            elif self.size - columns.rows > max(columns.rows // 8, SEALED_MIN_ROWS):
                block = self._matrix[columns.rows : self.size]
                self._columns = columns.extended(block)
        elif columns is not None:
            self._columns = None
            self._changed = set()

    def _all_scores(self, query: npt.NDArray[np.float32]) -> Scores:
        """Every row's dot product with `query`: by column below the copy's end, the rows
        changed since and those after it in full."""
        self.seal()
        columns = self._columns
        if columns is None:
            return self._matrix[: self.size] @ query
        scores = np.empty(self.size, np.float32)
        scores[: columns.rows] = columns.scores(query)
        scores[columns.rows :] = self._matrix[columns.rows : self.size] @ query
        if self._changed:
            changed = np.fromiter(self._changed, np.int64, len(self._changed))
            scores[changed] = self._matrix[changed] @ query
        return scores

    def scores_at(self, query: npt.NDArray[np.float32], rows: Rows) -> Scores:
        """Cosine of `query` with each of `rows`, in their order: a window that once held
        ten thousand events and now holds forty scores forty rows, not every row it used."""
        return self._matrix[rows] @ query

    def search(
        self,
        query: npt.NDArray[np.float32],
        top: int,
        floor: float,
        allowed: npt.NDArray[np.bool_] | None = None,
    ) -> tuple[Rows, Scores]:
        """The `top` rows most similar to `query` with a cosine of at least `floor`, among
        the rows `allowed` marks (every row when None; a short mask leaves the rest out)."""
        if self.size == 0 or top <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        scores = self._all_scores(query)
        scores[~self._valid[: self.size]] = -np.inf
        if allowed is not None:
            mask = np.zeros(self.size, bool)
            mask[: min(len(allowed), self.size)] = allowed[: self.size]
            scores[~mask] = -np.inf
        top = min(top, self.size)
        rows = np.argpartition(-scores, top - 1)[:top]
        rows = rows[np.argsort(-scores[rows], kind="stable")]
        keep = np.isfinite(scores[rows]) & (scores[rows] >= floor)
        return rows[keep].astype(np.int64), scores[rows][keep].astype(np.float32)


class Bm25Index:
    """Okapi BM25 (k1 = 1.2, b = 0.75) over given tokens. Postings are kept as growing lists
    and turned into numpy arrays on first use after a change, so a query costs a few vector
    operations per query term rather than a Python loop over the documents."""

    K1, B = 1.2, 0.75

    def __init__(self) -> None:
        self._postings: dict[str, tuple[list[int], list[int]]] = {}
        self._arrays: dict[str, tuple[Rows, Scores]] = {}
        self._df: Counter[str] = Counter()
        self._length = np.zeros(1024, dtype=np.float32)
        self._alive = np.zeros(1024, dtype=bool)
        self._tokens: dict[int, Counter[str]] = {}
        self.size = 0
        self.docs = 0
        self.total_length = 0.0

    def add(self, row: int, tokens: Sequence[str]) -> None:
        counts = Counter(tokens)
        if row >= len(self._alive):
            grow = max(row + 1, 2 * len(self._alive))
            self._length = np.resize(self._length, grow)
            self._alive = np.concatenate([self._alive, np.zeros(grow - len(self._alive), bool)])
        self.size = max(self.size, row + 1)
        self._length[row] = len(tokens)
        self._alive[row] = True
        self._tokens[row] = counts
        self.docs += 1
        self.total_length += len(tokens)
        for token, tf in counts.items():
            rows, tfs = self._postings.setdefault(token, ([], []))
            rows.append(row)
            tfs.append(tf)
            self._df[token] += 1
            self._arrays.pop(token, None)

    def remove(self, row: int) -> None:
        counts = self._tokens.pop(row, None)
        if counts is None:
            return
        self._alive[row] = False
        self.docs -= 1
        self.total_length -= float(self._length[row])
        for token in counts:
            self._df[token] -= 1
            if self._df[token] <= 0:
                del self._df[token]
                self._postings.pop(token, None)
                self._arrays.pop(token, None)

    def _postings_of(self, token: str) -> tuple[Rows, Scores]:
        arrays = self._arrays.get(token)
        if arrays is None:
            rows, tfs = self._postings[token]
            arrays = (np.asarray(rows, np.int64), np.asarray(tfs, np.float32))
            self._arrays[token] = arrays
        return arrays

    def search(self, tokens: Sequence[str], top: int) -> tuple[Rows, Scores]:
        """The `top` rows with the highest BM25 score above 0 for the query `tokens`."""
        terms = [t for t in dict.fromkeys(tokens) if t in self._df]
        if not terms or self.docs == 0 or top <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        n = self.docs
        avgdl = self.total_length / n or 1.0
        scores = np.zeros(self.size, dtype=np.float32)
        norm = self.K1 * (1 - self.B + self.B * self._length[: self.size] / avgdl)
        for term in terms:
            df = self._df[term]
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            rows, tfs = self._postings_of(term)
            scores[rows] += idf * tfs * (self.K1 + 1) / (tfs + norm[rows])
        scores[~self._alive[: self.size]] = 0
        hits = np.flatnonzero(scores > 0)
        if len(hits) > top:
            hits = hits[np.argpartition(-scores[hits], top - 1)[:top]]
        hits = hits[np.argsort(-scores[hits], kind="stable")]
        return hits.astype(np.int64), scores[hits]
