"""The vector index: every search returns the rows a whole scan ranks first, whether the
rows are read whole or, for mostly-zero vectors, by column."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from hologram.memory.recall.index import SEALED_MIN_ROWS, VectorIndex

DIM = 64


def _sparse(rng: np.random.Generator, rows: int, share: float) -> npt.NDArray[np.float32]:
    """Unit vectors with about `share` of their numbers set, signed as hashed ones are."""
    values = rng.normal(size=(rows, DIM)).astype(np.float32)
    values[rng.random((rows, DIM)) > share] = 0.0
    values[np.arange(rows), rng.integers(0, DIM, rows)] = 1.0  # none left all zero
    return values / np.linalg.norm(values, axis=1, keepdims=True)


def _filled(
    rng: np.random.Generator, rows: int, share: float
) -> tuple[VectorIndex, dict[int, npt.NDArray[np.float32]]]:
    """An index of `rows` vectors with about `share` of their numbers set, and the vectors."""
    index = VectorIndex(DIM)
    vectors = dict(enumerate(_sparse(rng, rows, share)))
    for row, vector in vectors.items():
        index.set(row, vector)
    return index, vectors


def _whole_scan(
    vectors: dict[int, npt.NDArray[np.float32]], query: npt.NDArray[np.float32]
) -> dict[int, float]:
    return {row: float(vector @ query) for row, vector in vectors.items()}


def _check(index: VectorIndex, vectors: dict[int, npt.NDArray[np.float32]], rng) -> None:
    for query in _sparse(rng, 20, 0.2):
        rows, scores = index.search(query, 30, -1.0)
        expected = _whole_scan(vectors, query)
        assert set(rows.tolist()) <= set(expected)
        # The scores are the whole scan's, and no row left out beats one returned.
        for row, score in zip(rows.tolist(), scores.tolist(), strict=True):
            assert score == pytest.approx(expected[row], abs=1e-5)
        floor = float(scores.min())
        missed = [s for r, s in expected.items() if r not in set(rows.tolist())]
        assert max(missed) <= floor + 1e-5


def test_mostly_zero_vectors_are_read_by_column_and_rank_as_a_whole_scan_does() -> None:
    rng = np.random.default_rng(1)
    index, vectors = _filled(rng, SEALED_MIN_ROWS + 500, 0.1)
    _check(index, vectors, rng)
    assert index.by_column == SEALED_MIN_ROWS + 500
    # Rows written after the copy, rows rewritten under it and rows removed from it.
    for row, vector in enumerate(_sparse(rng, 300, 0.1), start=len(vectors)):
        index.set(row, vector)
        vectors[row] = vector
    for row, vector in zip(range(0, 3000, 7), _sparse(rng, 429, 0.1), strict=True):
        index.set(row, vector)
        vectors[row] = vector
    for row in range(3, 3000, 11):
        index.remove(row)
        vectors.pop(row)
    index.set(5, None)
    vectors.pop(5)
    _check(index, vectors, rng)
    assert index.by_column == SEALED_MIN_ROWS + 500


def test_the_column_copy_is_extended_as_the_rows_grow() -> None:
    rng = np.random.default_rng(2)
    index, vectors = _filled(rng, 2 * SEALED_MIN_ROWS, 0.1)
    _check(index, vectors, rng)
    first = index.by_column
    # Rows rewritten under the copy stay scanned whole after it is extended.
    for row, vector in zip(range(0, 600, 3), _sparse(rng, 200, 0.1), strict=True):
        index.set(row, vector)
        vectors[row] = vector
    for row, vector in enumerate(_sparse(rng, first, 0.1), start=first):
        index.set(row, vector)
        vectors[row] = vector
    _check(index, vectors, rng)
    assert index.by_column == 2 * first


def test_dense_vectors_are_always_scanned_whole() -> None:
    rng = np.random.default_rng(3)
    index, vectors = _filled(rng, SEALED_MIN_ROWS + 10, 1.0)
    _check(index, vectors, rng)
    assert index.by_column == 0


def test_a_small_index_is_scanned_whole() -> None:
    rng = np.random.default_rng(4)
    index, vectors = _filled(rng, SEALED_MIN_ROWS - 1, 0.1)
    _check(index, vectors, rng)
    assert index.by_column == 0


def test_a_row_written_again_with_its_own_vector_is_not_scanned_again() -> None:
    # A turn moving from the window to the cold context is indexed again with the vector
    # it had: the column copy still holds it, so searches need not read it whole.
    rng = np.random.default_rng(5)
    index, vectors = _filled(rng, SEALED_MIN_ROWS + 100, 0.1)
    _check(index, vectors, rng)
    for row in range(0, 400, 4):
        index.set(row, vectors[row].copy())
    assert index.rescanned == 0
    for row, vector in zip(range(1, 10, 2), _sparse(rng, 5, 0.1), strict=True):
        index.set(row, vector)
        vectors[row] = vector
    assert index.rescanned == 5
    _check(index, vectors, rng)
