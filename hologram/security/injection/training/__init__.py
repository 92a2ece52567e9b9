"""Training the learned score and measuring review on the corpus: never imported by the
kernel, only by the command, the benchmark and the tests.

    python -m hologram.security.injection.training [--check] [--folds]
"""

from hologram.security.injection.training.measure import Labelled, Rates, flagged_by, rates
from hologram.security.injection.training.trainer import (
    CORPUS,
    Example,
    Trained,
    choose,
    decides,
    learning_input,
    main,
    train,
    tuning_examples,
    write,
)

__all__ = [
    "CORPUS",
    "Example",
    "Labelled",
    "Rates",
    "Trained",
    "choose",
    "decides",
    "flagged_by",
    "learning_input",
    "main",
    "rates",
    "train",
    "tuning_examples",
    "write",
]
