"""Answer accuracy: probes answered by a model from what was recalled, judged by another,
scored as J and token F1, with tokens and cost. The models are scripted model servers
speaking the OpenAI wire format through the kernel's own adapters and provider managers."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from hologram.eval import (
    AnswerConfig,
    EvalConfig,
    EvalError,
    Experiment,
    Ranker,
    load_dataset,
    token_f1,
)
from hologram.eval.answer import answer_tokens, memory_line, verdict
from hologram.llm import ScriptedModelServer
from tests.serve.harness import ScriptedModel

ANSWERS = {
    "p1": "bees",
    "p2": "Kiwi fruit",
    "p3": "Lisbon",
    "p4": "black coffee",
    "p5": "on 11 May",
}
"""What the scripted reader says to each answerable probe (p6 is adversarial: not asked)."""
VERDICTS = {"p1": "CORRECT", "p2": "CORRECT", "p3": "CORRECT", "p4": "WRONG", "p5": "WRONG"}
"""The scripted judge calls p5 WRONG although its answer holds the gold one: J must follow
the judge, F1 the words."""
GOLD = {"p1": "bees", "p2": "kiwi", "p3": "Lisbon", "p4": "peppermint tea", "p5": "11 May"}
PRICES = {"reader-1": {"input": 1.0, "output": 2.0}, "grader-1": {"input": 3.0, "output": 4.0}}


def test_token_f1_normalises_case_punctuation_articles_and_reads_chinese_by_character() -> None:
    assert answer_tokens("The Lisbon, Portugal!") == ["lisbon", "portugal"]
    assert token_f1("The Lisbon.", "lisbon") == 1.0
    assert token_f1("peppermint tea", "tea") == pytest.approx(2 / 3)
    assert token_f1("black coffee", "peppermint tea") == 0.0
    assert answer_tokens("去里斯本。") == ["去", "里", "斯", "本"]
    assert token_f1("里斯本", "去里斯本") == pytest.approx(2 * 1 * 0.75 / 1.75)
    assert token_f1("", "") == 1.0 and token_f1("x", "") == 0.0


def test_the_judges_last_label_counts() -> None:
    assert verdict("CORRECT") is True
    assert verdict("wrong") is False
    assert verdict('{"label": "CORRECT"}') is True
    assert verdict("INCORRECT") is False
    assert verdict("It could look CORRECT, but the date differs: WRONG") is False
    assert verdict("I cannot tell") is None


def test_answer_configurations_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "answer.toml"
    path.write_text(
        'answerer = "main"\njudge = "judge"\ncontext = 5\n[settings]\n'
        '"core.llm.sources.main.base_url" = "http://127.0.0.1:9/v1"\n'
        '"core.llm.sources.main.api_key" = { env = "SOME_KEY" }\n'
        '"core.llm.sources.judge.api_key" = "sk-in-the-file"\n',
        encoding="utf-8",
    )
    config = AnswerConfig.load(path)
    assert (config.answerer, config.judge_source, config.context) == ("main", "judge", 5)
    recorded = json.dumps(config.to_dict())
    assert "sk-in-the-file" not in recorded and "SOME_KEY" in recorded
    assert AnswerConfig(judge="").judge_source == "default"
    with pytest.raises(ValueError, match=r"core\.llm"):
        AnswerConfig(settings={"core.memory.context.top_k": 3})
    with pytest.raises(ValueError, match="unknown answer configuration keys"):
        AnswerConfig.from_dict({"reader": "x"})


def _scripted_replies(server: ScriptedModelServer, texts: dict[str, str]) -> None:
    for probe in ("p1", "p2", "p3", "p4", "p5"):
        server.queue_text(texts[probe])


async def test_probes_are_answered_from_the_recall_and_judged_by_another_source(
    tiny_dataset: Path, tmp_path: Path
) -> None:
    async with (
        ScriptedModelServer(model="reader-1") as reader,
        ScriptedModelServer(model="grader-1") as grader,
    ):
        _scripted_replies(reader, ANSWERS)
        _scripted_replies(grader, VERDICTS)
        answer = AnswerConfig(
            answerer="reader",
            judge="grader",
            context=4,
            settings={
                "core.llm.sources.reader.base_url": reader.base_url,
                "core.llm.sources.reader.model": "reader-1",
                "core.llm.sources.reader.api_key": "sk-reader-secret",
                "core.llm.sources.grader.base_url": grader.base_url,
                "core.llm.sources.grader.model": "grader-1",
                "core.llm.prices": PRICES,
            },
        )
        out = tmp_path / "out"
        config = EvalConfig(name="episodic", ranker=Ranker.EPISODIC)
        experiment = Experiment(
            [tiny_dataset], [config], out, progress=False, answer=answer, baseline=False
        )
        results = await experiment.arun()
        assert len(reader.requests) == len(grader.requests) == 5

        conversation = load_dataset(tiny_dataset).conversations[0]
        turns = {t.id: t for t in conversation.turns()}
        probes = results.probes.set_index("probe")
        answers = results.answers.set_index("probe")
        for index, probe in enumerate(("p1", "p2", "p3", "p4", "p5")):
            asked = reader.requests[index].json
            assert asked["model"] == "reader-1"
            prompt = asked["messages"][-1]["content"]
            question = probes.loc[probe, "question"]
            assert f"Question: {question}" in prompt
            recalled = [t for t in probes.loc[probe, "retrieved"] if t][:4]
            assert recalled and answers.loc[probe, "context"] == recalled
            for turn_id in recalled:
                assert memory_line(turns[turn_id], config.text) in prompt
            # A turn recalled below the first four is not shown.
            for turn_id in probes.loc[probe, "retrieved"][4:]:
                assert memory_line(turns[turn_id], config.text) not in prompt
            judged = grader.requests[index].json
            assert judged["model"] == "grader-1"
            grading = judged["messages"][-1]["content"]
            assert question in grading and f"Gold answer: {GOLD[probe]}" in grading
            assert f"Answer to grade: {ANSWERS[probe]}" in grading

        assert "p6" not in answers.index, "adversarial probes have no gold answer to grade"
        assert answers["j"].to_dict() == {"p1": 1.0, "p2": 1.0, "p3": 1.0, "p4": 0.0, "p5": 0.0}
        f1 = {p: token_f1(ANSWERS[p], GOLD[p]) for p in GOLD}
        assert f1["p5"] == pytest.approx(0.8) and f1["p2"] == pytest.approx(2 / 3)
        assert answers["f1"].to_dict() == pytest.approx(f1)
        assert set(answers["answer_source"]) == {"reader"}
        assert set(answers["judge_source"]) == {"grader"}

        overall = results.summary.set_index(["config", "category"]).loc[("episodic", "all")]
        assert overall["j"] == pytest.approx(0.6)
        assert overall["f1"] == pytest.approx(sum(f1.values()) / 5)
        peers = results.peers.loc[("tiny", "episodic")]
        assert peers["J"] == pytest.approx(60.0) and peers["F1"] == pytest.approx(
            100 * sum(f1.values()) / 5, abs=1e-3
        )

        usage = results.usage.loc[("tiny", "episodic")]
        assert usage["answered"] == 5 and usage["unpriced"] == 0
        assert usage["answer_tokens_in"] == answers["answer_tokens_in"].sum() > 0
        assert usage["judge_tokens_out"] == answers["judge_tokens_out"].sum() > 0
        assert usage["tokens_in"] == usage["answer_tokens_in"] + usage["judge_tokens_in"]
        expected = (
            usage["answer_tokens_in"] * 1.0
            + usage["answer_tokens_out"] * 2.0
            + usage["judge_tokens_in"] * 3.0
            + usage["judge_tokens_out"] * 4.0
        ) / 1e6
        assert usage["cost"] == pytest.approx(expected, abs=1e-6)

        for name in ("answers.csv", "usage.csv", "summary.csv"):
            assert (out / name).exists()
        assert "j" in pd.read_csv(out / "summary.csv").columns
        saved = (out / "results.json").read_text(encoding="utf-8")
        assert "sk-reader-secret" not in saved and '"answerer": "reader"' in saved

        # Run again: the answers are saved, and nobody is asked twice.
        again = await Experiment(
            [tiny_dataset], [config], out, progress=False, answer=answer, baseline=False
        ).arun()
        assert len(reader.requests) == len(grader.requests) == 5
        pd.testing.assert_frame_equal(again.usage, results.usage)


async def test_an_unpriced_model_reports_tokens_and_no_cost(
    tiny_dataset: Path, tmp_path: Path
) -> None:
    async with ScriptedModelServer(model="reader-1") as model:
        for probe in ("p1", "p2", "p3", "p4", "p5"):
            model.queue_text(ANSWERS[probe]).queue_text("CORRECT")
        answer = AnswerConfig(
            answerer="only",
            settings={
                "core.llm.sources.only.base_url": model.base_url,
                "core.llm.sources.only.model": "reader-1",
                "core.llm.prices": {"grader-1": {"input": 1.0}},
            },
        )
        config = EvalConfig(name="episodic", ranker=Ranker.EPISODIC)
        results = await Experiment(
            [tiny_dataset],
            [config],
            tmp_path / "out",
            progress=False,
            answer=answer,
            baseline=False,
        ).arun()
    usage = results.usage.loc[("tiny", "episodic")]
    assert usage["unpriced"] == 5 and pd.isna(usage["cost"]) and usage["tokens_out"] > 0
    assert results.answers["j"].mean() == 1.0


async def test_the_answer_mode_refuses_without_a_model(
    tiny_dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HOLOGRAM_LLM_BASE_URL", "HOLOGRAM_LLM_MODEL", "HOLOGRAM_LLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    out = tmp_path / "out"
    config = EvalConfig(name="episodic", ranker=Ranker.EPISODIC)
    with pytest.raises(EvalError, match=r"needs a model.*has no base_url"):
        await Experiment(
            [tiny_dataset], [config], out, progress=False, answer=AnswerConfig()
        ).arun()
    assert not (out / "units").exists(), "it refused before replaying anything"
    named = AnswerConfig(answerer="reader", settings={"core.llm.sources.reader.model": "m"})
    with pytest.raises(EvalError, match="reader"):
        await Experiment([tiny_dataset], [config], out, progress=False, answer=named).arun()
    missing = AnswerConfig(answerer="nobody")
    with pytest.raises(EvalError, match="'nobody' is not defined"):
        await Experiment([tiny_dataset], [config], out, progress=False, answer=missing).arun()


def test_the_cli_answers_with_the_environments_model_and_refuses_without_one(
    tiny_dataset: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hologram.cli import main

    config = tmp_path / "episodic.toml"
    config.write_text('ranker = "episodic"\n', encoding="utf-8")
    argv = ["eval", str(tiny_dataset), "--config", str(config), "--quiet", "--no-baseline"]
    for name in ("HOLOGRAM_LLM_BASE_URL", "HOLOGRAM_LLM_MODEL", "HOLOGRAM_LLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert main([*argv, "--out", str(tmp_path / "refused"), "--answer"]) == 2
    assert "needs a model" in capsys.readouterr().err

    model = ScriptedModel().start()
    try:
        for name, value in model.env.items():
            monkeypatch.setenv(name, value)
        replies = []
        for probe in ("p1", "p2", "p3", "p4", "p5"):
            replies += [{"text": ANSWERS[probe]}, {"text": VERDICTS[probe]}]
        model.queue(*replies)
        assert main([*argv, "--out", str(tmp_path / "answered"), "--answer"]) == 0
        asked = model.asked()
    finally:
        model.stop()
    printed = capsys.readouterr().out
    assert len(asked) == 10 and "Question: Which fruit am I allergic to?" in asked[2]
    assert "Answer to grade: Kiwi fruit" in asked[3]
    assert "answering: 5 probes" in printed and "cost needs prices" in printed
    saved = pd.read_csv(tmp_path / "answered" / "usage.csv")
    assert saved.loc[0, "j"] == 60.0 and saved.loc[0, "answered"] == 5
