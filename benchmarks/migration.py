"""Data-dir update benchmarks: migrating a data dir of 100,000 turns from the oldest schema
this project shipped, and the self-check every start pays on a current one.

    python benchmarks/migration.py [--turns 100000] [--runs 3]

The data dir is built by the test suite's builder of shipped schemas (tests/update/shipped.py):
an unversioned config and journal, the graph at schema 1, `turns` inputs, entities, facts and
text blocks. "migrate" is the whole upgrade (backup of every file, every step, verification);
"check" is what a start costs when nothing is older (quick_check, row counts, the manifest).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hologram.update import prepare
from tests.update import shipped


def _disk_bytes(root: Path) -> int:
    return sum(
        p.stat().st_size for p in root.rglob("*") if p.is_file() and "backups" not in p.parts
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        template = shipped.build(Path(tmp) / "template", graph_version=1, turns=args.turns)
        size = _disk_bytes(template)
        migrate, check = [], []
        for run in range(args.runs):
            root = Path(tmp) / f"run{run}"
            shutil.copytree(template, root)
            started = time.perf_counter()
            report = prepare(root)
            migrate.append(time.perf_counter() - started)
            assert report.backup is not None and len(report.migrated) >= 3
            started = time.perf_counter()
            assert not prepare(root).migrated
            check.append(time.perf_counter() - started)
            shutil.rmtree(root)
    print(f"data dir of {args.turns:,} turns ({size / 1e6:.1f} MB), median of {args.runs} runs")
    print(
        f"migrate oldest shipped schema → current (backup, steps, verify): "
        f"{statistics.median(migrate) * 1000:.0f} ms"
    )
    print(
        f"start-up self-check on a current data dir: {statistics.median(check) * 1000:.0f} ms"
        "  (target: within boot ≤ 2 s at 200k turns)"
    )


if __name__ == "__main__":
    main()
