"""``python -m hologram eval``: run configurations over datasets and print the comparison."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hologram.kernel import Commands

EXECUTORS = ("local", "dask", "ray")
REPLAY_TARGET_S = 15.0
"""TARGETS.md: a sweep over a LoCoMo-sized conversation must take minutes, not hours."""


def add_commands(commands: Commands) -> None:
    parser = commands.add(
        "eval",
        run_eval,
        description="Replay each DATASET (a project dataset directory, or LoCoMo's JSON, "
        "recognised from the file) into a fresh kernel per configuration, ask its probes, and "
        "print recall@1/5/10/20 per category and overall, then the measures peers publish "
        "(recall_any@10, NDCG@10, session recall@10, MRR) with recall@10 as a ratio to a "
        "BM25 baseline over the same turns. Results (probes.csv, summary.csv, table.csv, "
        "peers.csv, the recall chart recall.svg, results.json; with --answer also answers.csv "
        "and usage.csv) go to --out; a run started again with the same --out resumes where "
        "it stopped.",
    )
    parser.add_argument("datasets", nargs="+", metavar="DATASET")
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="TOML",
        help="a configuration file (repeat to compare several; default: the kernel's defaults)",
    )
    parser.add_argument("--out", type=Path, default=Path("eval-results"), help="results directory")
    parser.add_argument("--workers", type=int, default=1, help="units run side by side")
    parser.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="local",
        help="local worker processes, or a Dask cluster (pip install 'hologram[dask]')",
    )
    parser.add_argument("--address", help="scheduler address of an existing Dask cluster")
    parser.add_argument("--ks", default="1,5,10,20", help="recall@k columns to print")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="leave out the BM25 baseline row (bm25s over the same turns, no kernel)",
    )
    parser.add_argument(
        "--answer",
        nargs="?",
        const="",
        default=None,
        metavar="TOML",
        help="also answer each probe from what was recalled and score the answer with an LLM "
        "judge (J) and token F1, reporting tokens and cost; needs a model: the sources named "
        "in TOML (answerer, judge, [settings] of core.llm.* keys), or without TOML the "
        "HOLOGRAM_LLM_BASE_URL/_MODEL/_API_KEY environment (see hologram/eval/answer.py)",
    )


def run_eval(args: argparse.Namespace) -> int:
    # Imported here: building the parser must not load pandas and the kernel.
    import statistics

    import pandas as pd

    from hologram.eval.answer import AnswerConfig, cost_line
    from hologram.eval.config import EvalConfig
    from hologram.eval.harness import Experiment
    from hologram.eval.tiers import EvalError

    try:
        configs = [EvalConfig.load(path) for path in args.config] or [EvalConfig()]
        answer = None
        if args.answer is not None:
            answer = AnswerConfig.load(args.answer) if args.answer else AnswerConfig()
        experiment = Experiment(
            args.datasets,
            configs,
            args.out,
            executor=args.executor,
            workers=args.workers,
            address=args.address,
            progress=not args.quiet,
            baseline=not args.no_baseline,
            answer=answer,
        )
        results = experiment.run()
    except (OSError, ValueError, KeyError, EvalError, RuntimeError) as exc:
        print(f"hologram eval: {exc}", file=sys.stderr)
        return 2
    ks = [k.strip() for k in args.ks.split(",") if k.strip()]
    columns = [c for c in results.table.columns if c.split(" ")[0] in {f"recall@{k}" for k in ks}]
    with pd.option_context("display.width", 200, "display.max_columns", None):
        print(results.table[columns].to_string())
        print()
        print(results.peers.to_string())
    overall = results.summary[results.summary["category"] == "all"]
    for _, row in overall.iterrows():
        print(
            f"{row['dataset']} · {row['config']}: MRR {row['mrr']:.3f}, retrieval p50 "
            f"{row['latency_p50_ms']:.2f} ms / p95 {row['latency_p95_ms']:.2f} ms, "
            f"memory section {row['prompt_tokens']:.0f} tokens"
        )
    replays = {k: i["replay_seconds"] for k, i in results.units.items() if i.get("replay_seconds")}
    if replays:
        slowest = max(replays, key=replays.__getitem__)
        print(
            f"replay per conversation: median {statistics.median(replays.values()):.1f} s, "
            f"slowest {replays[slowest]:.1f} s ({slowest}); target ≤ {REPLAY_TARGET_S:.0f} s"
        )
    if results.usage is not None:
        print()
        print(results.usage.to_string())
        print(cost_line(results.usage))
    print(f"results in {args.out}")
    return 0
