"""A learned score beside the rules: hashed character n-grams, the rules' own signals, and
logistic regression.

The rules (the other modules of this package) name phrases and structures of each kind; a
sentence that says the same thing in other words slips between them. The learned score
looks at the letters as well: every character n-gram of the folded text (`NGRAMS` long; a
Chinese character or bigram is a word or part of one, an English trigram a piece of a stem
or of a word joint, so no word segmenter is needed in either language) is hashed into one
of `DIMENSIONS` weights, and a window's score is the bias plus the sum of its n-grams'
weights over the square root of their count. A text longer than `WINDOW` characters is
scored window by window (half a window apart) and its best window counts, so one
instruction in a long page is not diluted by the page.

It also sees what the rules saw (`Context`): the name of every feature that matched near
the passage and the band (`SCORE_BANDS`) its rule score falls in, each hashed into the same
weights and counted whole. The rules' weights were set by hand; here an addressee, an order
and a secret found together can weigh what the training texts say they weigh, and a
passage's wording can tip a run the rules left just short.

The weights are trained by `hologram.security.injection.train` on the tuning half of the
project's corpus only (tests/security/corpus) and shipped beside this module in
`learned.npz`, with the SHA-256 of the training input and the training settings; nothing is
downloaded. Everything here is vectorised numpy: the features of a text cost a few array
passes over its code points, not a Python loop over its n-grams.
"""

from __future__ import annotations

import bisect
import hashlib
import logging
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

DIMENSIONS = 1 << 16
NGRAMS = (1, 2, 3)
WINDOW = 240
WEIGHTS = Path(__file__).with_name("learned.npz")
FORMAT = 2
#: The bands of a passage's rule score; a passage is in the last band it reaches. Bands, not
#: a ramp: a score over the threshold is already a finding, so what training learns from it
#: must not spill into the band just under it, the only one a second look meets.
SCORE_BANDS = (0.0, 0.3, 0.5, 0.7, 0.9, 1.0)
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
_MIX = np.uint64(0xBF58476D1CE4E5B9)
_SHIFT = np.uint64(31)
_MASK = np.uint64(DIMENSIONS - 1)
_SALT = {n: np.uint64(n * 0x632BE59BD9B4E019 & 0xFFFFFFFFFFFFFFFF) for n in NGRAMS}

Indices = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Context:
    """What the rules found about a passage: its features' names and its rule score."""

    signals: frozenset[str] = frozenset()
    score: float = 0.0

    def indices(self) -> Indices:
        """The weight index of each signal name and of the score's band."""
        band = bisect.bisect_right(SCORE_BANDS, self.score) - 1  # -1: penalties outweigh
        keys = [f"signal:{name}" for name in sorted(self.signals)] + [f"band:{band}"]
        return np.array([_key_index(k) for k in keys], dtype=np.int64)


NO_CONTEXT = Context()


def _key_index(key: str) -> int:
    digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & (DIMENSIONS - 1)


class WeightsDamaged(ValueError):
    """The shipped weight file cannot be used; the message says why."""


def codepoints(folded: str) -> npt.NDArray[np.uint64]:
    """The text's code points, whitespace runs counted once (layout is not a signal)."""
    text = " ".join(folded.split())
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)


def ngram_indices(points: npt.NDArray[np.uint64]) -> list[Indices]:
    """For each n of `NGRAMS`, the weight index of every n-gram, in text order."""
    found: list[Indices] = []
    length = len(points)
    with np.errstate(over="ignore"):
        for n in NGRAMS:
            if length < n:
                found.append(np.zeros(0, dtype=np.int64))
                continue
            h = points[: length - n + 1] ^ _SALT[n]
            for k in range(1, n):
                h = h * _MULTIPLIER + points[k : length - n + 1 + k]
            h = (h ^ (h >> _SHIFT)) * _MIX
            found.append(((h >> _SHIFT) & _MASK).astype(np.int64))
    return found


def text_indices(folded: str) -> Indices:
    """Every n-gram's weight index of a whole text (what training sees)."""
    parts = ngram_indices(codepoints(folded))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


@dataclass(frozen=True, slots=True)
class Window:
    """The best-scoring stretch of a text: code point offsets into its whitespace-collapsed
    form, mapped back by `LearnedScorer.best`, and the probability that it is an injection."""

    start: int
    end: int
    probability: float


class LearnedScorer:
    """The shipped weights, loaded once; `best` scores a folded text."""

    def __init__(self, weights: npt.NDArray[np.float32], bias: float, digest: str) -> None:
        if weights.shape != (DIMENSIONS,):
            raise WeightsDamaged(f"weights have shape {weights.shape}, not ({DIMENSIONS},)")
        if not np.all(np.isfinite(weights)) or not math.isfinite(bias):
            raise WeightsDamaged("weights hold a value that is not a finite number")
        self.weights = weights.astype(np.float64)
        self.bias = float(bias)
        self.digest = digest

    @classmethod
    def load(cls, path: Path = WEIGHTS) -> LearnedScorer:
        """The weights in `path`; `WeightsDamaged` (never another error) if they are unusable."""
        try:
            with np.load(path, allow_pickle=False) as data:
                if int(data["format"]) != FORMAT:
                    raise WeightsDamaged(f"format {int(data['format'])}, expected {FORMAT}")
                dimensions = int(data["dimensions"])
                ngrams = tuple(int(n) for n in data["ngrams"])
                if dimensions != DIMENSIONS or ngrams != NGRAMS:
                    raise WeightsDamaged(
                        f"trained for {dimensions} dimensions and n-grams {ngrams}, "
                        f"this code hashes into {DIMENSIONS} with {NGRAMS}"
                    )
                weights = np.asarray(data["weights"], dtype=np.float32)
                bias = float(data["bias"])
                digest = str(data["training_sha256"])
                if str(data["weights_sha256"]) != weights_digest(weights, bias):
                    raise WeightsDamaged("the weights do not match the digest stored with them")
        except WeightsDamaged:
            raise
        except Exception as error:  # a damaged zip or array raises many kinds of error
            raise WeightsDamaged(f"{type(error).__name__}: {error}") from None
        return cls(weights, bias, digest)

    def logit(self, folded: str, context: Context = NO_CONTEXT) -> float:
        """The whole text's score (log-odds), as training sees it."""
        indices = text_indices(folded)
        base = self.bias + float(self.weights[context.indices()].sum())
        if len(indices) == 0:
            return base
        return base + float(self.weights[indices].sum()) / math.sqrt(len(indices))

    def best(self, folded: str, context: Context = NO_CONTEXT) -> Window:
        """The best window of the text (the whole text when it is short); `context` is what
        the rules found about it."""
        points = codepoints(folded)
        length = len(points)
        parts = ngram_indices(points)
        base = self.bias + float(self.weights[context.indices()].sum())
        if length <= WINDOW:
            count = sum(len(p) for p in parts)
            total = sum(float(self.weights[p].sum()) for p in parts)
            logit = base + (total / math.sqrt(count) if count else 0.0)
            return Window(0, length, _sigmoid(logit))
        # Per start position, the weight of every n-gram starting there; a window's sum is a
        # difference of prefix sums, so every window costs the same whatever its place.
        per_start = np.zeros(length, dtype=np.float64)
        counts = np.zeros(length, dtype=np.float64)
        for p in parts:
            per_start[: len(p)] += self.weights[p]
            counts[: len(p)] += 1.0
        sums = np.concatenate(([0.0], np.cumsum(per_start)))
        numbers = np.concatenate(([0.0], np.cumsum(counts)))
        starts = np.arange(0, length - WINDOW // 2, WINDOW // 2)
        ends = np.minimum(starts + WINDOW, length)
        # An n-gram belongs to a window when it starts in it and ends in it.
        last = np.maximum(ends - min(NGRAMS) + 1, starts)
        window_sums = sums[last] - sums[starts]
        window_counts = np.maximum(numbers[last] - numbers[starts], 1.0)
        logits = base + window_sums / np.sqrt(window_counts)
        top = int(np.argmax(logits))
        return Window(int(starts[top]), int(ends[top]), _sigmoid(float(logits[top])))


def weights_digest(weights: npt.NDArray[np.float32], bias: float) -> str:
    digest = hashlib.sha256(np.ascontiguousarray(weights, dtype=np.float32).tobytes())
    digest.update(np.float64(bias).tobytes())
    return digest.hexdigest()


def _sigmoid(logit: float) -> float:
    if logit >= 0:
        return 1.0 / (1.0 + math.exp(-logit))
    odds = math.exp(logit)
    return odds / (1.0 + odds)
