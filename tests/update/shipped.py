"""The schemas this project has shipped, frozen here as they were, and a builder of data dirs
at each of them: the update module must bring every one to the current release.

Before data-dir versions existed (release 0.1.0 and earlier) the config database and the
input journal were unversioned (`user_version` 0) and no manifest was written; the graph has
numbered its schema since its first release, so a data dir may hold any of its versions
1-5. Releases with a manifest shipped the input journal at versions 1 (the 0.1.0 table) and
2 (with each input's attempt count). These copies are never edited: a change of schema is a
new step in the store's list.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

CONFIG_V0 = (
    "CREATE TABLE config (key TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at REAL NOT NULL)"
)

JOURNAL_V0 = """
CREATE TABLE inputs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    text TEXT NOT NULL,
    channel TEXT NOT NULL,
    level INTEGER NOT NULL,
    source TEXT NOT NULL,
    user_id TEXT NOT NULL,
    extra TEXT NOT NULL,
    state TEXT NOT NULL,
    reply TEXT,
    created_at REAL NOT NULL,
    finished_at REAL
)
"""

JOURNAL_STEPS: tuple[str, ...] = (
    JOURNAL_V0,
    "ALTER TABLE inputs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0",
)
JOURNAL_VERSIONS = tuple(range(1, len(JOURNAL_STEPS) + 1))

GRAPH_STEPS: tuple[str, ...] = (
    """
    CREATE TABLE entities (
        id            INTEGER PRIMARY KEY,
        name          TEXT NOT NULL,
        norm          TEXT NOT NULL UNIQUE,
        type          TEXT NOT NULL DEFAULT '',
        mention_count INTEGER NOT NULL DEFAULT 1,
        vector        BLOB,
        fingerprint   TEXT,
        traits        TEXT NOT NULL DEFAULT '{}',
        created_at    REAL NOT NULL,
        updated_at    REAL NOT NULL,
        purged_at     REAL
    );
    CREATE TABLE aliases (
        alias_norm TEXT PRIMARY KEY,
        alias      TEXT NOT NULL,
        entity_id  INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE
    );
    CREATE INDEX aliases_entity ON aliases(entity_id);
    CREATE TABLE relations (
        id            INTEGER PRIMARY KEY,
        source_id     INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        target_id     INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        relation_type TEXT NOT NULL,
        confidence    REAL NOT NULL DEFAULT 1.0,
        sentence_text TEXT NOT NULL DEFAULT '',
        origin        TEXT NOT NULL DEFAULT '',
        created_at    REAL NOT NULL,
        valid_at      REAL NOT NULL,
        invalid_at    REAL,
        closed_reason TEXT,
        replaced_by   INTEGER,
        reviewed_at   REAL
    );
    CREATE INDEX relations_source ON relations(source_id, relation_type);
    CREATE INDEX relations_target ON relations(target_id);
    CREATE TABLE memory_blocks (
        id          TEXT PRIMARY KEY,
        kind        TEXT NOT NULL CHECK (kind IN ('text', 'media')),
        text        TEXT,
        data        BLOB,
        mime        TEXT,
        width       INTEGER,
        height      INTEGER,
        size        INTEGER,
        vector      BLOB,
        fingerprint TEXT,
        source      TEXT NOT NULL DEFAULT '',
        created_at  REAL NOT NULL,
        CHECK ((kind = 'text' AND text IS NOT NULL AND data IS NULL)
            OR (kind = 'media' AND data IS NOT NULL AND mime IS NOT NULL))
    );
    CREATE TABLE relation_blocks (
        relation_id INTEGER NOT NULL REFERENCES relations(id) ON DELETE CASCADE,
        block_id    TEXT NOT NULL REFERENCES memory_blocks(id) ON DELETE CASCADE,
        PRIMARY KEY (relation_id, block_id)
    );
    """,
    """
    CREATE VIRTUAL TABLE entity_names USING fts5(
        norm, content='entities', content_rowid='id', tokenize='trigram'
    );
    INSERT INTO entity_names(rowid, norm) SELECT id, norm FROM entities;
    CREATE TRIGGER entities_ai AFTER INSERT ON entities BEGIN
        INSERT INTO entity_names(rowid, norm) VALUES (new.id, new.norm);
    END;
    CREATE TRIGGER entities_ad AFTER DELETE ON entities BEGIN
        INSERT INTO entity_names(entity_names, rowid, norm) VALUES ('delete', old.id, old.norm);
    END;
    CREATE TRIGGER entities_au AFTER UPDATE OF norm ON entities BEGIN
        INSERT INTO entity_names(entity_names, rowid, norm) VALUES ('delete', old.id, old.norm);
        INSERT INTO entity_names(rowid, norm) VALUES (new.id, new.norm);
    END;
    """,
    """
    CREATE TABLE distill_records (
        id           INTEGER PRIMARY KEY,
        speaker      TEXT NOT NULL,
        text         TEXT NOT NULL,
        at           REAL NOT NULL,
        processed_at REAL
    );
    CREATE INDEX distill_pending ON distill_records(processed_at, at);
    CREATE TABLE consolidation_log (
        kind     TEXT NOT NULL,
        key      TEXT NOT NULL,
        asked_at REAL NOT NULL,
        reply    TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (kind, key)
    );
    """,
    """
    ALTER TABLE memory_blocks ADD COLUMN words TEXT;
    """,
    """
    ALTER TABLE memory_blocks ADD COLUMN speaker TEXT NOT NULL DEFAULT '';
    """,
)
GRAPH_VERSIONS = tuple(range(1, len(GRAPH_STEPS) + 1))

SETTING = ("core.agent.max_tool_rounds", 7)


def _sqlite(path: Path, script: str, version: int) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(script)
    db.execute(f"PRAGMA user_version = {version}")
    return db


def _statements(steps: tuple[str, ...]) -> str:
    return "\n".join(step.strip() for step in steps)


def build(root: Path, graph_version: int = len(GRAPH_STEPS), turns: int = 50) -> Path:
    """A data dir as release 0.1.0 left it, with its graph at `graph_version`."""
    root.mkdir(parents=True, exist_ok=True)
    db = _sqlite(root / "config.db", CONFIG_V0, 0)
    db.execute("INSERT INTO config VALUES (?, ?, 0)", (SETTING[0], json.dumps(SETTING[1])))
    db.close()
    db = _sqlite(root / "inputs.db", JOURNAL_V0, 0)
    db.executemany(
        "INSERT INTO inputs(text, channel, level, source, user_id, extra, state, reply,"
        " created_at, finished_at) VALUES (?, 'notebook', 3, 'user', '', '{}', 'done', ?, ?, ?)",
        [(f"turn {n} 第{n}句", f"reply {n}", float(n), float(n) + 0.5) for n in range(turns)],
    )
    db.close()
    db = _sqlite(root / "graph.db", _statements(GRAPH_STEPS[:graph_version]), graph_version)
    for n in range(turns):
        db.execute(
            "INSERT INTO entities(id, name, norm, created_at, updated_at) VALUES (?, ?, ?, 0, 0)",
            (n + 1, f"Entity {n}", f"entity {n}"),
        )
    db.executemany(
        "INSERT INTO relations(source_id, target_id, relation_type, created_at, valid_at)"
        " VALUES (?, ?, 'knows', 0, 0)",
        [(n + 1, (n + 1) % turns + 1) for n in range(turns)],
    )
    db.executemany(
        "INSERT INTO memory_blocks(id, kind, text, source, created_at) VALUES (?, 'text', ?, "
        "'user', 0)",
        [(f"b{n}", f"turn {n}") for n in range(turns)],
    )
    db.close()
    context = root / "memory" / "context"
    context.mkdir(parents=True)
    events = [
        {
            "id": f"e{n}",
            "ts": float(n),
            "source": "user",
            "channel": "notebook",
            "input": f"turn {n}",
            "response": f"reply {n}",
            "vector_text": f"turn {n}",
        }
        for n in range(min(turns, 10))
    ]
    (context / "context.snapshot.jsonl").write_text(
        "\n".join(json.dumps(r) for r in [{"format": 1}, *events]) + "\n", encoding="utf-8"
    )
    # The log appends one more event and removes the first, as a prune left it.
    extra = {"id": "e-late", "ts": 99.0, "source": "agent", "response": "a late reply"}
    (context / "context.wal.jsonl").write_text(
        json.dumps({"op": "append", "event": extra})
        + "\n"
        + json.dumps({"op": "remove", "ids": ["e0"]})
        + "\n",
        encoding="utf-8",
    )
    docs = root / "memory" / "coldcontext" / "docs"
    docs.mkdir(parents=True)
    for n in range(3):
        doc = {
            "id": f"c{n}",
            "created_at": float(n),
            "stored_at": 10.0 + n,
            "source": "qq",
            "channel": "qq",
            "input": f"cold turn {n} 冷{n}",
            "response": "",
            "text": f"cold turn {n} 冷{n}",
            "tokens": ["cold", "turn", f"冷{n}"],
            "access_count": n,
            "last_access": None,
        }
        (docs / f"c{n}.json").write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    entry = root / "knowledge" / "cooking" / "bread"
    entry.mkdir(parents=True)
    (entry / "content.md").write_text("Sourdough: flour, water, salt.\n", encoding="utf-8")
    plugin = root / "plugin-data" / "notes"
    plugin.mkdir(parents=True)
    (plugin / "state.json").write_text('{"count": 3}\n', encoding="utf-8")
    return root


def journal_at(path: Path, version: int, inputs: int = 40) -> None:
    """An input journal as the release that shipped `version` left it: finished inputs, and
    (from version 2) a few that ran more than once, and one still queued."""
    path.unlink(missing_ok=True)
    db = _sqlite(path, ";\n".join(s.strip() for s in JOURNAL_STEPS[:version]), version)
    rows = [
        (f"input {n} 第{n}句", "done" if n < inputs - 1 else "queued", float(n))
        for n in range(inputs)
    ]
    db.executemany(
        "INSERT INTO inputs(text, channel, level, source, user_id, extra, state, created_at)"
        " VALUES (?, 'http', 3, 'user', '', '{}', ?, ?)",
        rows,
    )
    if version >= 2:
        db.execute("UPDATE inputs SET attempts = 1")
        db.execute("UPDATE inputs SET attempts = 3 WHERE id % 10 = 0")
    db.close()
