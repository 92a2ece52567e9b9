"""A learned score beside the rules: hashed character and word n-grams, the rules' own
signals, and logistic regression.

The rules (the other modules of this package) name phrases and structures of each kind; a
sentence that says the same thing in other words slips between them, and a sentence that
uses their words about something else trips them. The learned score looks at the letters
and the words as well, in two groups of features:

* every character n-gram of the folded text (`NGRAMS` long; a Chinese character or bigram
  is a word or part of one, an English trigram a piece of a stem or of a word joint);
* every word and pair of adjacent words (`WORD_NGRAMS`): a run of Latin letters, digits,
  `_` or `'` is a word, and so is each Chinese character, so a Chinese pair is a two-character
  word or the joint of two, with no segmenter. Words see what trigrams split: "previous
  instructions" as one feature, not as "pre", "evi", ... that a recipe shares.

Each group's n-grams are hashed into one of `DIMENSIONS` weights, and a window's score is
the bias plus, for each group, the sum of its n-grams' weights over the square root of their
count (so a long window does not outweigh a short one, and neither group drowns the other).
A text longer than `WINDOW` characters is scored window by window (half a window apart) and
its best window counts, so one instruction in a long page is not diluted by the page.

It also sees what the rules saw (`Context`): the name of every feature that matched near the
passage and the band (`SCORE_BANDS`) its rule score falls in, each hashed into the same
weights and counted whole. The rules' weights were set by hand; here an addressee, an order
and a secret found together weigh what the training texts say they weigh, and a passage's
wording can tip a run the rules left short, or hold back one whose words are the rules' but
whose sentence is not an order.

The weights are trained by `hologram.security.injection.training` on the tuning half of the
project's corpus only (tests/security/corpus) and shipped beside this module in
`learned.npz`, with the probability at which a second look confirms a run (`threshold`,
chosen by cross-validation on the tuning half), the SHA-256 of the training input and the
training settings; nothing is downloaded. Beside them, `learned.json` (`Manifest`) says
which corpora and split trained them, when, what training measured, and the SHA-256 of the
weight file itself, which loading checks. Everything here is vectorised numpy: the features
of a text cost a few array passes over its code points, not a Python loop over its n-grams.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

DIMENSIONS = 1 << 16
NGRAMS = (1, 2, 3)
WORD_NGRAMS = (1, 2)
WINDOW = 240
WEIGHTS = Path(__file__).with_name("learned.npz")
#: The manifest beside a weight file: the same name, `.json`.
MANIFEST_SUFFIX = ".json"
FORMAT = 3
#: The bands of a passage's rule score; a passage is in the last band it reaches. Bands, not
#: a ramp: what training learns from runs far over the threshold must not spill into the
#: bands around it, where a second look decides.
SCORE_BANDS = (0.0, 0.3, 0.5, 0.7, 0.9, 1.0, 1.3, 1.6, 2.0)
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
_MIX = np.uint64(0xBF58476D1CE4E5B9)
_SHIFT = np.uint64(31)
_MASK = np.uint64(DIMENSIONS - 1)
_SALT = {n: np.uint64(n * 0x632BE59BD9B4E019 & 0xFFFFFFFFFFFFFFFF) for n in NGRAMS}
# Word n-grams hash apart from character n-grams of the same length.
_WORD_SALT = {n: np.uint64((n + 8) * 0x632BE59BD9B4E019 & 0xFFFFFFFFFFFFFFFF) for n in WORD_NGRAMS}
_OFFSET = np.uint64(0xD6E8FEB86659FD93)

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


@dataclass(frozen=True, slots=True)
class Manifest:
    """What a weight file is: its digest, and how and when it was trained."""

    #: SHA-256 of the weight file's bytes.
    sha256: str
    #: The day the weights were trained (ISO 8601).
    trained: str
    #: The corpus files read, relative to the repository.
    corpora: tuple[str, ...]
    #: Which texts of them trained the weights.
    split: str
    #: Figures training measured (cross-validated on the tuning split), by name.
    figures: Mapping[str, float] = field(default_factory=dict)
    #: The settings training chose (penalty, threshold).
    chosen: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path) -> Manifest:
        """The manifest at `path`; `WeightsDamaged` if it is missing or unreadable."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                str(data["sha256"]),
                str(data["trained"]),
                tuple(str(c) for c in data["corpora"]),
                str(data["split"]),
                {str(k): float(v) for k, v in data.get("figures", {}).items()},
                {str(k): float(v) for k, v in data.get("chosen", {}).items()},
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            raise WeightsDamaged(
                f"its manifest {path} is missing or unreadable ({type(error).__name__}: {error})"
            ) from None

    def as_json(self) -> dict[str, Any]:
        return {
            "sha256": self.sha256,
            "trained": self.trained,
            "corpora": list(self.corpora),
            "split": self.split,
            "figures": dict(self.figures),
            "chosen": dict(self.chosen),
        }


def manifest_of(weights: Path) -> Path:
    return weights.with_suffix(MANIFEST_SUFFIX)


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def codepoints(folded: str) -> npt.NDArray[np.uint64]:
    """The text's code points, whitespace runs counted once (layout is not a signal)."""
    text = " ".join(folded.split())
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)


def ngram_indices(points: npt.NDArray[np.uint64]) -> list[Indices]:
    """For each n of `NGRAMS`, the weight index of every character n-gram, in text order
    (the n-gram at position i starts at code point i). Each n-gram's hash extends the one a
    character shorter, salted by its length at the end. (Unsigned array arithmetic wraps
    without a warning, which is what a hash wants.)"""
    found: list[Indices] = []
    h = points
    for n in range(1, max(NGRAMS) + 1):
        if n > 1:
            h = h[:-1] * _MULTIPLIER + points[n - 1 :]
        if n in _SALT:
            found.append(_index(h ^ _SALT[n]))
    return found


def _index(h: npt.NDArray[np.uint64]) -> Indices:
    h = (h ^ (h >> _SHIFT)) * _MIX
    return ((h >> _SHIFT) & _MASK).astype(np.int64)


def _classes() -> npt.NDArray[np.uint8]:
    """For each code point of the Basic Multilingual Plane, 1 for a word character, 2 for a
    Chinese character, 0 otherwise; read-only. Folded text is case-folded, so a word
    character is a lower-case Latin letter (with the accented ones of U+00C0 to U+024F, less
    the two signs there), a digit, '_' or "'". A table lookup is one array pass where range
    comparisons were six."""
    table = np.zeros(0x10000, dtype=np.uint8)
    table[ord("a") : ord("z") + 1] = 1
    table[ord("0") : ord("9") + 1] = 1
    table[[ord("_"), ord("'")]] = 1
    table[0xC0:0x250] = 1
    table[[0xD7, 0xF7]] = 0
    table[0x3400:0x4DC0] = 2
    table[0x4E00:0xA000] = 2
    table.flags.writeable = False
    return table


_CLASSES = _classes()
_LAST = np.uint64(0xFFFF)  # past the table: other (an emoji, a rare character)


def word_indices(points: npt.NDArray[np.uint64]) -> tuple[list[Indices], list[Indices]]:
    """For each n of `WORD_NGRAMS`, the weight index of every word n-gram and the code point
    where it starts. A word is a run of word characters or one Chinese character; a word's
    hash is the sum of its characters' hashes, each mixed with its place in the word, so
    the whole thing stays array passes."""
    classes = _CLASSES[np.minimum(points, _LAST)]
    wordy = classes == 1
    previous = np.concatenate(([False], wordy[:-1]))
    begins = (classes == 2) | (wordy & ~previous)
    inside = classes != 0
    starts = np.flatnonzero(begins)
    empty = np.zeros(0, dtype=np.int64)
    if len(starts) == 0:
        return [empty for _ in WORD_NGRAMS], [empty for _ in WORD_NGRAMS]
    positions = np.flatnonzero(inside)
    # Which word each inside character belongs to, and its place in that word.
    beginning = begins[positions]
    word_of = np.cumsum(beginning, dtype=np.int64) - 1
    place = (positions - starts[word_of]).astype(np.uint64)
    mixed = (points[positions] + (place + np.uint64(1)) * _OFFSET) * _MULTIPLIER
    mixed ^= mixed >> _SHIFT
    # Each word's characters are contiguous among the inside ones, in order: a word's sum
    # is a difference of prefix sums (which wrap, as the hash may).
    sums = np.concatenate((np.zeros(1, dtype=np.uint64), np.cumsum(mixed, dtype=np.uint64)))
    bounds = np.append(np.flatnonzero(beginning), len(mixed))
    words = sums[bounds[1:]] - sums[bounds[:-1]]
    found: list[Indices] = []
    at: list[Indices] = []
    h = words
    for n in range(1, max(WORD_NGRAMS) + 1):
        if n > 1:
            h = h[:-1] * _MULTIPLIER + words[n - 1 :]
        if n in _WORD_SALT:
            found.append(_index(h ^ _WORD_SALT[n]))
            at.append(starts[: len(h)])
    return found, at


def feature_groups(points: npt.NDArray[np.uint64]) -> list[tuple[Indices, Indices]]:
    """The text's two groups of features: each group's weight indices and where each one
    starts (a code point offset); a group is normalised by its own count."""
    chars = ngram_indices(points)
    char_starts = [np.arange(len(p), dtype=np.int64) for p in chars]
    words, word_starts = word_indices(points)
    return [
        (np.concatenate(chars), np.concatenate(char_starts)),
        (np.concatenate(words), np.concatenate(word_starts)),
    ]


def text_features(folded: str) -> list[Indices]:
    """Every feature's weight index of a whole text, group by group (what training sees)."""
    return [indices for indices, _ in feature_groups(codepoints(folded))]


@dataclass(frozen=True, slots=True)
class Window:
    """The best-scoring stretch of a text: code point offsets into its whitespace-collapsed
    form, mapped back by `LearnedScorer.best`, and the probability that it is an injection."""

    start: int
    end: int
    probability: float


class LearnedScorer:
    """The shipped weights, loaded once; `best` scores a folded text."""

    def __init__(
        self,
        weights: npt.NDArray[np.float32],
        bias: float,
        digest: str,
        threshold: float = 0.5,
        manifest: Manifest | None = None,
    ) -> None:
        """`threshold`: the probability at which a second look confirms a run (shipped with
        the weights, since it was chosen for them); `manifest`: the file's, when loaded."""
        if weights.shape != (DIMENSIONS,):
            raise WeightsDamaged(f"weights have shape {weights.shape}, not ({DIMENSIONS},)")
        if not np.all(np.isfinite(weights)) or not math.isfinite(bias):
            raise WeightsDamaged("weights hold a value that is not a finite number")
        if not 0.0 < threshold < 1.0:
            raise WeightsDamaged(f"threshold {threshold} is not a probability strictly in (0, 1)")
        self.weights = weights.astype(np.float64)
        self.bias = float(bias)
        self.digest = digest
        self.threshold = float(threshold)
        self.manifest = manifest

    @classmethod
    def load(cls, path: Path = WEIGHTS) -> LearnedScorer:
        """The weights in `path`, checked against the manifest beside it; `WeightsDamaged`
        (never another error) if they are unusable."""
        manifest = Manifest.read(manifest_of(path))
        try:
            if file_digest(path) != manifest.sha256:
                raise WeightsDamaged(
                    f"{path.name} does not match the sha256 digest in its manifest "
                    f"{manifest_of(path).name}"
                )
            with np.load(path, allow_pickle=False) as data:
                if int(data["format"]) != FORMAT:
                    raise WeightsDamaged(f"format {int(data['format'])}, expected {FORMAT}")
                dimensions = int(data["dimensions"])
                ngrams = tuple(int(n) for n in data["ngrams"])
                words = tuple(int(n) for n in data["word_ngrams"])
                if dimensions != DIMENSIONS or ngrams != NGRAMS or words != WORD_NGRAMS:
                    raise WeightsDamaged(
                        f"trained for {dimensions} dimensions, n-grams {ngrams} and word "
                        f"n-grams {words}; this code hashes into {DIMENSIONS} with {NGRAMS} "
                        f"and {WORD_NGRAMS}"
                    )
                weights = np.asarray(data["weights"], dtype=np.float32)
                bias = float(data["bias"])
                threshold = float(data["threshold"])
                digest = str(data["training_sha256"])
                if str(data["weights_sha256"]) != weights_digest(weights, bias, threshold):
                    raise WeightsDamaged("the weights do not match the digest stored with them")
        except WeightsDamaged:
            raise
        except Exception as error:  # a damaged zip or array raises many kinds of error
            raise WeightsDamaged(f"{type(error).__name__}: {error}") from None
        return cls(weights, bias, digest, threshold, manifest)

    def logit(self, folded: str, context: Context = NO_CONTEXT) -> float:
        """The whole text's score (log-odds), as training sees it."""
        total = self.bias + float(self.weights[context.indices()].sum())
        for indices in text_features(folded):
            if len(indices):
                total += float(self.weights[indices].sum()) / math.sqrt(len(indices))
        return total

    def best(self, folded: str, context: Context = NO_CONTEXT) -> Window:
        """The best window of the text (the whole text when it is short); `context` is what
        the rules found about it."""
        points = codepoints(folded)
        length = len(points)
        groups = feature_groups(points)
        base = self.bias + float(self.weights[context.indices()].sum())
        if length <= WINDOW:
            logit = base
            for indices, _ in groups:
                if len(indices):
                    logit += float(self.weights[indices].sum()) / math.sqrt(len(indices))
            return Window(0, length, _sigmoid(logit))
        starts = np.arange(0, length - WINDOW // 2, WINDOW // 2)
        ends = np.minimum(starts + WINDOW, length)
        logits = np.full(len(starts), base)
        for indices, at in groups:
            # Per start position, the weight of every feature starting there; a window's sum
            # is a difference of prefix sums, so every window costs the same wherever it is.
            # A feature belongs to the window it starts in.
            per_start = np.bincount(at, weights=self.weights[indices], minlength=length)
            counts = np.bincount(at, minlength=length).astype(np.float64)
            sums = np.concatenate(([0.0], np.cumsum(per_start)))
            numbers = np.concatenate(([0.0], np.cumsum(counts)))
            window_counts = numbers[ends] - numbers[starts]
            window_sums = sums[ends] - sums[starts]
            logits += np.where(
                window_counts > 0, window_sums / np.sqrt(np.maximum(window_counts, 1.0)), 0.0
            )
        top = int(np.argmax(logits))
        return Window(int(starts[top]), int(ends[top]), _sigmoid(float(logits[top])))


def weights_digest(weights: npt.NDArray[np.float32], bias: float, threshold: float) -> str:
    digest = hashlib.sha256(np.ascontiguousarray(weights, dtype=np.float32).tobytes())
    digest.update(np.float64(bias).tobytes())
    digest.update(np.float64(threshold).tobytes())
    return digest.hexdigest()


def _sigmoid(logit: float) -> float:
    if logit >= 0:
        return 1.0 / (1.0 + math.exp(-logit))
    odds = math.exp(logit)
    return odds / (1.0 + odds)
