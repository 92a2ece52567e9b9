"""The project's prompt-injection corpus, in English and Chinese.

`injections.jsonl` holds injections and `near_misses.jsonl` benign texts that come close: tool
outputs, emails, web pages, code comments, docs and chat that talk about instructions,
systems, administrators, passwords and policies without giving the assistant an order. Every
text was written for this project (none is copied from a public data set); each line is
`{"id", "text", "lang", "kind", "label", "split"}`. `kind` is the kind of injection a text is,
or comes near to (one of `KINDS`, the names of the review's rules); `label` is `injection` or
`benign`.

`split` halves every (kind, language, label) cell by a hash of the text, chosen before any
rule was written: rules and weights were chosen on `tuning`, `heldout` is reported beside it
(benchmarks/security.py). Both halves have one author, so held-out figures measure how well
the rules generalise beyond the sentences they were tuned on, not how they fare against
another writer.

`added.jsonl` holds texts written later, for the kinds the first held-out figures showed
weak (authority, secret exfiltration, hidden markup, policy rewrites, in both languages), in
the same forms. Its split is fixed by `split_of` (the first byte of the text's SHA-256), so
no text was placed in either half by hand; tests/security/test_injection_corpus.py checks it.

`third_en.jsonl` and `third_zh.jsonl` (ids `inj3.`, `near3.`) were written by another author,
who read only tuning texts for the format and never saw the rules or their figures, in many
more document forms; split by `split_of` too. On them the rules first scored as they had on
the issue's outside set, which is what they are for: the learned score trains on their
tuning half, and their held-out half is the fairest figure the corpus gives.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
KINDS = (
    "ignore_instructions",
    "role_override",
    "prompt_exfiltration",
    "fake_system_tag",
    "authority_impersonation",
    "secret_exfiltration",
    "hidden_instruction",
    "policy_rewrite",
)
LANGS = ("en", "zh")
SPLITS = ("tuning", "heldout")
FILES = ("injections.jsonl", "near_misses.jsonl", "added.jsonl", "third_en.jsonl", "third_zh.jsonl")


@dataclass(frozen=True, slots=True)
class CorpusText:
    id: str
    text: str
    lang: str
    kind: str
    label: str
    split: str

    @property
    def injection(self) -> bool:
        return self.label == "injection"


def split_of(text: str) -> str:
    """The split of a text added after the first batch: even first hash byte, tuning."""
    return "tuning" if hashlib.sha256(text.encode()).digest()[0] % 2 == 0 else "heldout"


def load() -> list[CorpusText]:
    texts = []
    for name in FILES:
        with open(HERE / name, encoding="utf-8") as lines:
            texts += [CorpusText(**json.loads(line)) for line in lines if line.strip()]
    return texts
