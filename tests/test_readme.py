"""The README points only at what the repository holds, and says what the test command
needs beyond the [test] extra."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
# A path as the README writes one in backticks: folders and files of the checkout.
PATH = re.compile(
    r"`((?:hologram|tests|adapters|plugins|notebooks|datasets|benchmarks|\.ci)(?:/[\w.*-]+)*/?)`"
)


TOUR = re.compile(r"^((?:hologram|adapters|plugins|datasets|notebooks|benchmarks)/[\w./]*)", re.M)


def test_every_path_the_readme_names_is_in_the_repository() -> None:
    named = set(PATH.findall(README)) | set(TOUR.findall(README))
    assert len(named) > 20
    missing = sorted(p for p in named if not list(ROOT.glob(p.rstrip("/"))))
    assert missing == []


def test_the_readme_links_nothing_outside_the_repository() -> None:
    assert "../" not in README
    links = re.findall(r"\]\(([^)]+)\)", README)
    assert all((ROOT / link).exists() for link in links if "://" not in link), links


def test_the_readme_says_what_ci_adds_and_what_skips_without_it() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "chromium fonts-wqy-zenhei" in ci and "chromium` and `fonts-wqy-zenhei" in README
    command = re.search(r"\.venv/bin/python -m pytest -q -n 2 tests --nbmake notebooks", ci)
    assert command is not None and command.group(0) in README
    for skipping in (
        "tests/browser/",
        "tests/serve/test_page_browser.py",
        "tests/eval/test_harness.py",
    ):
        assert skipping in README and list(ROOT.glob(skipping.rstrip("/")))


def test_every_test_file_that_can_skip_is_named_in_the_readmes_table() -> None:
    table = README[README.index("| without | skipped | where |") :].split("\n\n", 1)[0]
    named = re.findall(r"`(tests/[\w/.]*)`", table)
    skipping = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if path.name in ("chromium.py", "test_readme.py") or not re.search(
            r"pytest\.skip\(|importorskip\(|skipif\(|needs_chromium|from tests\.chromium", text
        ):
            continue
        skipping.append(path.relative_to(ROOT).as_posix())
    assert len(skipping) >= 8
    unnamed = [p for p in skipping if not any(p == n or p.startswith(n) for n in named if n)]
    assert unnamed == []


def test_use_a_real_model_gives_the_five_formats_in_the_settings_the_offline_model_names() -> None:
    from hologram.config import ENV_OVERRIDES
    from hologram.llm.offline_model import NO_LLM_HINT

    section = README[README.index("### Use a real model") :].split("\n### ", 1)[0]
    rows = [a for a in re.findall(r"^\| [^|]+ \| `(\w+)`", section, re.M) if a != "adapter"]
    assert {"openai", "deepseek", "anthropic", "gemini", "ollama"} <= set(rows)
    assert all((ROOT / "adapters" / f"{adapter}.lua").is_file() for adapter in rows), rows
    # The hint the offline model, the start line and /status give points here, spelled alike.
    assert "“Use a real model”" in NO_LLM_HINT["en"]
    for word in re.findall(
        r"(?:core\.llm\.sources\.default\.\w+|HOLOGRAM_LLM_\w+)", NO_LLM_HINT["en"]
    ):
        assert word.rsplit(".", 1)[-1] in section or word in section, word
    named = set(re.findall(r"HOLOGRAM_LLM_\w+", section))
    assert named and named <= set(ENV_OVERRIDES), named - set(ENV_OVERRIDES)
