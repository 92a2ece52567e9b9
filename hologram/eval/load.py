"""Reading a dataset whatever its format: the project's directory (`dataset`) or LoCoMo's
JSON (`locomo`), recognised from the file itself. Both readers build the dataset types, so
this module stands above them and neither knows of the other."""

from __future__ import annotations

import json
from pathlib import Path

from hologram.eval.dataset import Dataset, load_project
from hologram.eval.locomo import is_locomo, load_locomo


def load_dataset(path: str | Path) -> Dataset:
    """Recognise the format from the file itself: a directory with ``turns.jsonl`` is the
    project's format; a JSON list of samples with ``conversation`` and ``qa`` is LoCoMo's."""
    path = Path(path)
    if path.is_dir():
        if (path / "turns.jsonl").exists():
            return load_project(path)
        raise ValueError(
            f"{path} is a directory without turns.jsonl: a project dataset holds turns.jsonl "
            "and probes.jsonl (see datasets/README.md)"
        )
    if not path.exists():
        raise FileNotFoundError(f"no dataset at {path}")
    if path.name == "turns.jsonl":
        return load_project(path.parent)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} is not JSON ({exc}); expected LoCoMo's layout") from None
    if is_locomo(document):
        return load_locomo(document, name=path.stem, path=str(path))
    raise ValueError(
        f"{path}: not a format the harness knows: expected a project dataset directory "
        "(turns.jsonl + probes.jsonl) or LoCoMo's JSON (a list of samples with "
        "'conversation' and 'qa')"
    )
