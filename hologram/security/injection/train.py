"""Training the learned score (see `learned`) on the tuning half of the corpus, and only it.

    python -m hologram.security.injection.train [--corpus tests/security/corpus] [--check]

Reads every `*.jsonl` of the corpus directory, keeps the texts whose `split` is `tuning`,
folds them as review does, and reads each as a second look would: the sentences of its
strongest run of rule signals, with that run's signal names and score (`learning_input`;
a text without signals, whole). Fits logistic regression (mean log-loss plus an L2 penalty)
by full-batch Adam over a fixed number of steps from zero weights: no randomness, so the
same input gives the same weights. Writes `learned.npz` beside `learned.py` with the weights
(float32), the bias, the SHA-256 of the training input (every tuning text's id, label and
text, and the settings) and of the weights. The rules shape the input, so a change to them
asks for retraining: `--check` retrains and says whether the shipped file matches, without
writing. `--folds K` prints K-fold cross-validated figures of the whole review (rules and
second look) on the tuning split over a grid of the classifier's two second-look constants,
for choosing them (the held-out half is not read).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from hologram.security.injection import learned
from hologram.security.injection.classifier import (
    InjectionClassifier,
    sentence_ends,
    sentences_around,
)
from hologram.security.review import fold

CORPUS = Path(__file__).resolve().parents[3] / "tests" / "security" / "corpus"
STEPS = 300
RATE = 0.3
PENALTY = 1e-4


@dataclass(frozen=True, slots=True)
class Example:
    id: str
    text: str
    injection: bool


@dataclass(frozen=True, slots=True)
class Trained:
    weights: npt.NDArray[np.float32]
    bias: float
    training_sha256: str


def tuning_examples(corpus: Path = CORPUS) -> list[Example]:
    examples = []
    for path in sorted(corpus.glob("*.jsonl")):
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


def training_digest(
    examples: list[Example], steps: int = STEPS, rate: float = RATE, penalty: float = PENALTY
) -> str:
    digest = hashlib.sha256()
    settings = [learned.FORMAT, learned.DIMENSIONS, list(learned.NGRAMS), steps, rate, penalty]
    digest.update(json.dumps(settings).encode())
    for e in examples:
        digest.update(json.dumps([e.id, e.injection, e.text], ensure_ascii=False).encode())
    return digest.hexdigest()


def fit(
    examples: list[Example], steps: int = STEPS, rate: float = RATE, penalty: float = PENALTY
) -> tuple[npt.NDArray[np.float64], float]:
    """Weights and bias by full-batch Adam on the sparse hashed features."""
    rows: list[npt.NDArray[np.int64]] = []
    columns: list[npt.NDArray[np.int64]] = []
    values: list[npt.NDArray[np.float64]] = []
    classifier = InjectionClassifier()
    for row, example in enumerate(examples):
        text, context = learning_input(classifier, example.text)
        indices = learned.text_indices(text)
        signals = context.indices()
        rows.append(np.full(len(indices) + len(signals), row, dtype=np.int64))
        columns += [indices, signals]
        values += [
            np.full(len(indices), 1.0 / np.sqrt(max(1, len(indices)))),
            np.ones(len(signals)),
        ]
    row_of = np.concatenate(rows)
    column = np.concatenate(columns)
    value = np.concatenate(values)
    labels = np.array([e.injection for e in examples], dtype=np.float64)
    count = len(examples)
    weights = np.zeros(learned.DIMENSIONS + 1)  # the last one is the bias
    first = np.zeros_like(weights)
    second = np.zeros_like(weights)
    beta1, beta2, epsilon = 0.9, 0.999, 1e-8
    for step in range(1, steps + 1):
        logits = np.bincount(row_of, weights=weights[column] * value, minlength=count)
        logits += weights[-1]
        error = (1.0 / (1.0 + np.exp(-logits)) - labels) / count
        gradient = np.empty_like(weights)
        gradient[:-1] = np.bincount(
            column, weights=error[row_of] * value, minlength=learned.DIMENSIONS
        )
        gradient[:-1] += penalty * weights[:-1]
        gradient[-1] = error.sum()
        first = beta1 * first + (1 - beta1) * gradient
        second = beta2 * second + (1 - beta2) * gradient * gradient
        corrected = first / (1 - beta1**step)
        weights -= rate * corrected / (np.sqrt(second / (1 - beta2**step)) + epsilon)
    return weights[:-1], float(weights[-1])


def learning_input(classifier: InjectionClassifier, text: str) -> tuple[str, learned.Context]:
    """What the learned score reads of a text: what a second look at its strongest run
    would read."""
    folded = fold(text)
    strongest = classifier.strongest(folded.text, folded.invisible)
    if strongest is None:
        return folded.text, learned.NO_CONTEXT
    start, end = sentences_around(folded.text, strongest, sentence_ends(folded.text))
    return folded.text[start:end], learned.Context(strongest.signals, strongest.score)


def train(corpus: Path = CORPUS) -> Trained:
    examples = tuning_examples(corpus)
    weights, bias = fit(examples)
    return Trained(weights.astype(np.float32), bias, training_digest(examples))


def write(trained: Trained, path: Path = learned.WEIGHTS) -> None:
    with open(path, "wb") as out:
        np.savez_compressed(
            out,
            format=np.int64(learned.FORMAT),
            dimensions=np.int64(learned.DIMENSIONS),
            ngrams=np.array(learned.NGRAMS, dtype=np.int64),
            weights=trained.weights,
            bias=np.float64(trained.bias),
            training_sha256=np.str_(trained.training_sha256),
            weights_sha256=np.str_(learned.weights_digest(trained.weights, trained.bias)),
        )


FLOORS = (0.5, 0.6, 0.7, 0.8, 0.9)
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)


def folds(examples: list[Example], k: int) -> dict[tuple[float, float], list[tuple[Example, bool]]]:
    """For each (second-chance floor, learned threshold) of the grid, each tuning text with
    whether the whole review flags it when the learned score was trained without its fold;
    folds by a hash of the id, so they are the same every run."""
    fold_of = [hashlib.sha256(e.id.encode()).digest()[1] % k for e in examples]
    flagged: dict[tuple[float, float], list[tuple[Example, bool]]] = {}
    for held in range(k):
        inside = [e for e, f in zip(examples, fold_of, strict=True) if f != held]
        weights, bias = fit(inside)
        scorer = learned.LearnedScorer(weights.astype(np.float32), bias, "")
        outside = [e for e, f in zip(examples, fold_of, strict=True) if f == held]
        for floor in FLOORS:
            for threshold in THRESHOLDS:
                classifier = InjectionClassifier(
                    learned=scorer, second_chance=floor, learned_threshold=threshold
                )
                flagged.setdefault((floor, threshold), []).extend(
                    (e, _flags(classifier, e.text)) for e in outside
                )
    return flagged


#: How many points of recall one point of false positives costs when the constants are
#: chosen: a false alarm on a benign page blocks a tool result the user asked for.
FALSE_POSITIVE_COST = 3.0


def rates(results: list[tuple[Example, bool]]) -> tuple[float, float]:
    """Recall and false positives, in percent."""
    injections = [hit for e, hit in results if e.injection]
    benign = [hit for e, hit in results if not e.injection]
    return 100 * sum(injections) / len(injections), 100 * sum(benign) / len(benign)


def merit(recall: float, false_positives: float) -> float:
    return recall - FALSE_POSITIVE_COST * false_positives


def _flags(classifier: InjectionClassifier, text: str) -> bool:
    folded = fold(text)
    return bool(classifier.passages(folded.text, folded.invisible))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--check", action="store_true", help="compare with the shipped file")
    parser.add_argument("--folds", type=int, default=0, help="print K-fold figures on tuning")
    options = parser.parse_args(argv)
    if options.folds:
        grid = folds(tuning_examples(options.corpus), options.folds)
        rated = {point: rates(results) for point, results in grid.items()}
        for (floor, threshold), (recall, false_positives) in rated.items():
            print(
                f"second chance {floor:.1f}, learned threshold {threshold:.2f}: "
                f"recall {recall:5.1f} %, false positives {false_positives:5.1f} %"
            )
        floor, threshold = max(rated, key=lambda point: merit(*rated[point]))
        print(f"best by recall - {FALSE_POSITIVE_COST:g} x false positives: {floor}, {threshold}")
        return 0
    trained = train(options.corpus)
    if options.check:
        shipped = learned.LearnedScorer.load()
        same = shipped.digest == trained.training_sha256 and np.allclose(
            shipped.weights, trained.weights, atol=1e-6
        )
        print("the shipped weights match a retraining" if same else "the shipped weights DIFFER")
        return 0 if same else 1
    write(trained)
    print(f"wrote {learned.WEIGHTS} (training input sha256 {trained.training_sha256[:16]}…)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
