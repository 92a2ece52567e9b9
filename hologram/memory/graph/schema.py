"""The graph database's schema, as numbered migrations applied in order at open
(see `hologram.kernel.schema`: one transaction per step with its version bump)."""

from __future__ import annotations

import aiosqlite

from hologram.kernel import SchemaTooNew, statements

__all__ = ["GRAPH_MIGRATIONS", "SCHEMA_VERSION", "SchemaTooNew", "migrate"]

GRAPH_MIGRATIONS: tuple[str, ...] = (
    # 1: entities, aliases, relations with temporal validity, memory blocks.
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
    # 2: substring search over names without a table scan (trigrams: three characters or
    # more; shorter keywords use the exact and prefix paths over the `norm` index).
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
    # 3: the distillation pipeline's raw records (kept 7 days) and what consolidation
    # already asked the model, so an idle heartbeat never asks twice.
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
    # 4: a text block's keywords (a JSON list), so the word index is rebuilt at open
    # without segmenting every text again; NULL until computed.
    """
    ALTER TABLE memory_blocks ADD COLUMN words TEXT;
    """,
    # 5: who said what a text block records (an archived turn's source), so recall can
    # favour one speaker's turns; '' for blocks of nobody's words.
    """
    ALTER TABLE memory_blocks ADD COLUMN speaker TEXT NOT NULL DEFAULT '';
    """,
    # 6: text blocks become the turns the turn store keeps in the graph's place. The rows
    # of kind 'text' are moved there when the blocks next load (`BlockStore`), after the
    # update's backup; a text block that copied an archived turn names that turn here, so
    # its old id still resolves.
    """
    CREATE TABLE moved_text_blocks (
        id   TEXT PRIMARY KEY,
        turn TEXT NOT NULL
    );
    """,
)

SCHEMA_VERSION = len(GRAPH_MIGRATIONS)


async def migrate(db: aiosqlite.Connection) -> list[int]:
    """Bring `db` to `SCHEMA_VERSION`; returns the versions applied (the same steps the
    update module runs, with its backup, before any store opens)."""
    # `fetchone` is typed as maybe no row; this PRAGMA always answers exactly one.
    (version,) = await (await db.execute("PRAGMA user_version")).fetchone()  # type: ignore[misc]
    if version > SCHEMA_VERSION:
        raise SchemaTooNew("graph database", version, SCHEMA_VERSION)
    applied = []
    for number in range(version + 1, SCHEMA_VERSION + 1):
        await db.execute("BEGIN IMMEDIATE")
        try:
            for statement in statements(GRAPH_MIGRATIONS[number - 1]):
                await db.execute(statement)
            await db.execute(f"PRAGMA user_version = {number}")
        except BaseException:
            await db.execute("ROLLBACK")
            raise
        await db.execute("COMMIT")
        applied.append(number)
    return applied
