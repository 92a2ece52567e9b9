"""SIGKILL during a migration, then a restart: the data dir ends in the old state or the
new one, never a mix."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from hologram.update import prepare, survey
from hologram.update.migrate import MARKER, recover_interrupted
from tests.update import shipped
from tests.update.helpers import hashes

# The knowledge base migrates after config, the journal and the graph: when its second
# step kills the process, those three are already at their new versions.
KILLED_MIDWAY = textwrap.dedent(
    """
    import dataclasses, os, signal, sys
    from pathlib import Path
    from hologram.update import STORES, prepare
    from hologram.update.stores import record_versions

    def killed(directory):
        os.kill(os.getpid(), signal.SIGKILL)

    stores = tuple(
        dataclasses.replace(s, steps=(record_versions, killed)) if s.name == "knowledge" else s
        for s in STORES
    )
    prepare(Path(sys.argv[1]), stores)
    """
)


def _kill_midway(root: Path) -> None:
    result = subprocess.run([sys.executable, "-c", KILLED_MIDWAY, str(root)], timeout=120)
    assert result.returncode == -signal.SIGKILL


def test_a_kill_midway_is_rolled_back_to_the_old_state_at_the_next_start(tmp_path: Path) -> None:
    root = shipped.build(tmp_path / "data", graph_version=2)
    before = hashes(root)
    _kill_midway(root)
    assert (root / MARKER).exists() and hashes(root) != before  # a mix, until the restart

    assert recover_interrupted(root) is not None

    assert hashes(root) == before and not (root / MARKER).exists()


def test_the_restart_after_a_kill_ends_in_the_new_state(tmp_path: Path) -> None:
    root = shipped.build(tmp_path / "data", graph_version=2)
    _kill_midway(root)

    report = prepare(root)

    assert report.recovered is not None
    assert ("graph", 2, 6) in report.migrated and ("config", 0, 1) in report.migrated
    assert {s.status for s in survey(root)[0].stores} <= {"current", "absent"}
    assert not (root / MARKER).exists()
