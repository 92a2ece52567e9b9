"""Training the learned score (see `learned`) on the tuning half of the corpus, and only it.

    python -m hologram.security.injection.training [--corpus tests/security/corpus] [--check]
                                                   [--folds]

Reads every `*.jsonl` of the corpus directory, keeps the texts whose `split` is `tuning`,
folds them as review does, and reads each as a second look would: the sentences of its
strongest run of rule signals, with that run's signal names and score (`learning_input`;
a text without signals, whole). Fits logistic regression (mean log-loss plus an L2 penalty)
by full-batch Adam over a fixed number of steps from zero weights: no randomness, so the
same input gives the same weights.

Two settings are not fitted but chosen, both by `FOLDS`-fold cross-validation within the
tuning split (folds by a hash of each text's id): the L2 penalty, from `PENALTIES`, and the
probability at which a second look confirms a run, from `THRESHOLDS`. For each penalty,
every tuning text is scored by weights trained without its fold, the whole review's
decision (`decides`: a run at `CERTAIN` flags, one at `SECOND_CHANCE` flags at the
threshold) is taken at every threshold, and the pair with the best recall less
`FALSE_POSITIVE_COST` times the false positives wins. A threshold chosen on the fit itself
would read the fit's confidence on texts it has seen, which the held-out texts never share.
The chosen penalty then fits all of the tuning split.

Writes `learned.npz` beside `learned.py` with the weights (float32), the bias, the chosen
threshold and penalty, the SHA-256 of the training input (every tuning text's id, label and
text, and the settings) and of the weights; and its manifest `learned.json` (the corpus
files, the split, the day, the cross-validated figures of the chosen settings and the
SHA-256 of the written file, which loading checks). The rules shape the input, so a change to them
asks for retraining: `--check` retrains and says whether the shipped file matches, without
writing. `--folds` prints the cross-validated figures of every (penalty, threshold) pair
(the held-out half is not read).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from hologram.security.injection import (
    CERTAIN,
    SECOND_CHANCE,
    InjectionClassifier,
    learned,
    sentence_ends,
    sentences_around,
)
from hologram.security.review import fold

ROOT = Path(__file__).resolve().parents[4]
CORPUS = ROOT / "tests" / "security" / "corpus"
SPLIT = (
    "the texts whose split is 'tuning'; the held-out half is never read. The first batch is "
    "halved per (kind, language, label) by a hash chosen before any rule was written; later "
    "texts by split_of: an even first byte of the text's SHA-256 is tuning"
)
STEPS = 300
RATE = 0.3
PENALTIES = (1e-5, 3e-5, 1e-4, 3e-4, 1e-3)
THRESHOLDS = tuple(round(0.3 + 0.05 * i, 2) for i in range(14))
FOLDS = 5
#: How many points of recall one point of false positives costs when the settings are
#: chosen: a false alarm on a benign page blocks a tool result the user asked for.
FALSE_POSITIVE_COST = 3.0


@dataclass(frozen=True, slots=True)
class Example:
    id: str
    text: str
    injection: bool


@dataclass(frozen=True, slots=True)
class Trained:
    weights: npt.NDArray[np.float32]
    bias: float
    threshold: float
    penalty: float
    training_sha256: str
    #: The cross-validated recall and false positives (percent) of the chosen settings.
    figures: tuple[float, float]
    #: The corpus files read, and how many tuning texts they held.
    corpora: tuple[Path, ...]
    texts: int


@dataclass(frozen=True, slots=True)
class Design:
    """The tuning texts as training reads them: a sparse matrix (row, column, value), the
    labels, and each text's strongest rule score (None: no signal)."""

    rows: npt.NDArray[np.int64]
    columns: npt.NDArray[np.int64]
    values: npt.NDArray[np.float64]
    labels: npt.NDArray[np.float64]
    scores: list[float | None]

    def subset(self, chosen: npt.NDArray[np.int64]) -> Design:
        renumber = np.full(len(self.labels), -1, dtype=np.int64)
        renumber[chosen] = np.arange(len(chosen))
        keep = renumber[self.rows] >= 0
        return Design(
            renumber[self.rows[keep]],
            self.columns[keep],
            self.values[keep],
            self.labels[chosen],
            [self.scores[i] for i in chosen],
        )

    def logits(self, weights: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Log-odds of every row; the last weight is the bias."""
        sums = np.bincount(
            self.rows, weights=weights[self.columns] * self.values, minlength=len(self.labels)
        )
        return sums + weights[-1]


def corpus_files(corpus: Path = CORPUS) -> list[Path]:
    return sorted(corpus.glob("*.jsonl"))


def tuning_examples(corpus: Path = CORPUS) -> list[Example]:
    examples = []
    for path in corpus_files(corpus):
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                if not line.strip():
                    continue
                record = json.loads(line)
                if record["split"] == "tuning":
                    examples.append(
                        Example(record["id"], record["text"], record["label"] == "injection")
                    )
    return sorted(examples, key=lambda e: e.id)


def training_digest(examples: list[Example]) -> str:
    digest = hashlib.sha256()
    settings = [
        learned.FORMAT,
        learned.DIMENSIONS,
        list(learned.NGRAMS),
        list(learned.WORD_NGRAMS),
        list(learned.SCORE_BANDS),
        STEPS,
        RATE,
        list(PENALTIES),
        list(THRESHOLDS),
        FOLDS,
        FALSE_POSITIVE_COST,
        SECOND_CHANCE,
        CERTAIN,
    ]
    digest.update(json.dumps(settings).encode())
    for e in examples:
        digest.update(json.dumps([e.id, e.injection, e.text], ensure_ascii=False).encode())
    return digest.hexdigest()


def design(examples: list[Example]) -> Design:
    """Each example's features as a second look sees them, one row each: every group of
    n-grams weighs one over the square root of its count, every context key one."""
    rows: list[npt.NDArray[np.int64]] = []
    columns: list[npt.NDArray[np.int64]] = []
    values: list[npt.NDArray[np.float64]] = []
    scores: list[float | None] = []
    classifier = InjectionClassifier()
    for row, example in enumerate(examples):
        text, context, score = learning_input(classifier, example.text)
        scores.append(score)
        groups = learned.text_features(text)
        signals = context.indices()
        for indices in [*groups, signals]:
            rows.append(np.full(len(indices), row, dtype=np.int64))
            columns.append(indices)
        values += [np.full(len(g), 1.0 / np.sqrt(max(1, len(g)))) for g in groups]
        values.append(np.ones(len(signals)))
    return Design(
        np.concatenate(rows),
        np.concatenate(columns),
        np.concatenate(values),
        np.array([e.injection for e in examples], dtype=np.float64),
        scores,
    )


def fit(data: Design, penalty: float) -> npt.NDArray[np.float64]:
    """Weights, the bias last, by full-batch Adam on the sparse hashed features."""
    count = len(data.labels)
    weights = np.zeros(learned.DIMENSIONS + 1)
    first = np.zeros_like(weights)
    second = np.zeros_like(weights)
    beta1, beta2, epsilon = 0.9, 0.999, 1e-8
    for step in range(1, STEPS + 1):
        error = (1.0 / (1.0 + np.exp(-data.logits(weights))) - data.labels) / count
        gradient = np.empty_like(weights)
        gradient[:-1] = np.bincount(
            data.columns, weights=error[data.rows] * data.values, minlength=learned.DIMENSIONS
        )
        gradient[:-1] += penalty * weights[:-1]
        gradient[-1] = error.sum()
        first = beta1 * first + (1 - beta1) * gradient
        second = beta2 * second + (1 - beta2) * gradient * gradient
        corrected = first / (1 - beta1**step)
        weights -= RATE * corrected / (np.sqrt(second / (1 - beta2**step)) + epsilon)
    return weights


def learning_input(
    classifier: InjectionClassifier, text: str
) -> tuple[str, learned.Context, float | None]:
    """What the learned score reads of a text: what a second look at its strongest run
    would read; and that run's score (None: the text has no signal, so no second look
    ever meets it)."""
    folded = fold(text)
    strongest = classifier.strongest(folded.text, folded.invisible)
    if strongest is None:
        return folded.text, learned.NO_CONTEXT, None
    start, end = sentences_around(folded.text, strongest, sentence_ends(folded.text))
    context = learned.Context(strongest.signals, strongest.score)
    return folded.text[start:end], context, strongest.score


def decides(score: float | None, probability: float, threshold: float) -> bool:
    """The whole review's verdict on a text whose strongest run has `score`, as the
    classifier takes it with a learned score (see classifier)."""
    if score is None or score < SECOND_CHANCE:
        return False
    return score >= CERTAIN or probability >= threshold


def fold_of(examples: list[Example]) -> npt.NDArray[np.int64]:
    return np.array([hashlib.sha256(e.id.encode()).digest()[1] % FOLDS for e in examples])


def cross_validated(data: Design, folds: npt.NDArray[np.int64], penalty: float) -> list[float]:
    """Every text's probability from weights trained without its fold."""
    probabilities = np.zeros(len(data.labels))
    for held in range(FOLDS):
        inside = np.flatnonzero(folds != held)
        outside = np.flatnonzero(folds == held)
        weights = fit(data.subset(inside), penalty)
        logits = data.subset(outside).logits(weights)
        probabilities[outside] = 1.0 / (1.0 + np.exp(-logits))
    return [float(p) for p in probabilities]


def rates(labels: npt.NDArray[np.float64], flags: list[bool]) -> tuple[float, float]:
    """Recall and false positives, in percent."""
    hits = np.array(flags, dtype=bool)
    injection = labels > 0.5
    return 100 * float(hits[injection].mean()), 100 * float(hits[~injection].mean())


def merit(recall: float, false_positives: float) -> float:
    return recall - FALSE_POSITIVE_COST * false_positives


def grid(
    data: Design, folds: npt.NDArray[np.int64]
) -> dict[tuple[float, float], tuple[float, float]]:
    """Cross-validated recall and false positives of every (penalty, threshold)."""
    figures = {}
    for penalty in PENALTIES:
        probabilities = cross_validated(data, folds, penalty)
        for threshold in THRESHOLDS:
            flags = [
                decides(s, p, threshold) for s, p in zip(data.scores, probabilities, strict=True)
            ]
            figures[penalty, threshold] = rates(data.labels, flags)
    return figures


def choose(figures: dict[tuple[float, float], tuple[float, float]]) -> tuple[float, float]:
    """The best pair by merit; of equals, the first (the weaker penalty, the lower
    threshold), so the choice is the same every run."""
    return max(figures, key=lambda pair: merit(*figures[pair]))


def train(corpus: Path = CORPUS) -> Trained:
    examples = tuning_examples(corpus)
    data = design(examples)
    figures = grid(data, fold_of(examples))
    penalty, threshold = choose(figures)
    weights = fit(data, penalty)
    return Trained(
        weights[:-1].astype(np.float32),
        float(weights[-1]),
        threshold,
        penalty,
        training_digest(examples),
        figures[penalty, threshold],
        tuple(corpus_files(corpus)),
        len(examples),
    )


def write(trained: Trained, path: Path = learned.WEIGHTS) -> None:
    """The weight file, then its manifest (which names the file's digest)."""
    with open(path, "wb") as out:
        np.savez_compressed(
            out,
            format=np.int64(learned.FORMAT),
            dimensions=np.int64(learned.DIMENSIONS),
            ngrams=np.array(learned.NGRAMS, dtype=np.int64),
            word_ngrams=np.array(learned.WORD_NGRAMS, dtype=np.int64),
            weights=trained.weights,
            bias=np.float64(trained.bias),
            threshold=np.float64(trained.threshold),
            penalty=np.float64(trained.penalty),
            training_sha256=np.str_(trained.training_sha256),
            weights_sha256=np.str_(
                learned.weights_digest(trained.weights, trained.bias, trained.threshold)
            ),
        )
    recall, false_positives = trained.figures
    manifest = learned.Manifest(
        learned.file_digest(path),
        datetime.date.today().isoformat(),
        tuple(_shown(c) for c in trained.corpora),
        SPLIT,
        {
            "tuning_texts": trained.texts,
            "cross_validated_recall": round(recall, 1),
            "cross_validated_false_positives": round(false_positives, 1),
        },
        {"penalty": trained.penalty, "threshold": trained.threshold},
    )
    text = json.dumps(manifest.as_json(), indent=2, ensure_ascii=False) + "\n"
    learned.manifest_of(path).write_text(text, encoding="utf-8")


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hologram.security.injection.training",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--check", action="store_true", help="compare with the shipped file")
    parser.add_argument("--folds", action="store_true", help="print the cross-validated grid")
    options = parser.parse_args(argv)
    if options.folds:
        examples = tuning_examples(options.corpus)
        figures = grid(design(examples), fold_of(examples))
        for (penalty, threshold), (recall, false_positives) in figures.items():
            print(
                f"penalty {penalty:g}, threshold {threshold:.2f}: recall {recall:5.1f} %, "
                f"false positives {false_positives:5.1f} %, "
                f"merit {merit(recall, false_positives):5.1f}"
            )
        penalty, threshold = choose(figures)
        print(
            f"best by recall - {FALSE_POSITIVE_COST:g} x false positives: {penalty:g}, {threshold}"
        )
        return 0
    trained = train(options.corpus)
    if options.check:
        shipped = learned.LearnedScorer.load()
        same = (
            shipped.digest == trained.training_sha256
            and shipped.threshold == trained.threshold
            and np.allclose(shipped.weights, trained.weights, atol=1e-6)
        )
        print("the shipped weights match a retraining" if same else "the shipped weights DIFFER")
        return 0 if same else 1
    write(trained)
    print(
        f"wrote {learned.WEIGHTS} (penalty {trained.penalty:g}, threshold {trained.threshold}, "
        f"training input sha256 {trained.training_sha256[:16]}…)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
