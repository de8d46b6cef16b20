-- Memories: the source of truth the in-memory vector index is built from.
-- A memory keeps the provenance of where it came from (run, event,
-- reality, and for a world-local result its world); merging a duplicate
-- adds a row to memory_sources, so every provenance is kept.

-- +goose Up
CREATE TABLE memories (
    id              TEXT    NOT NULL PRIMARY KEY,
    text            TEXT    NOT NULL,
    type            TEXT    NOT NULL CHECK (type IN ('fact', 'observation', 'procedure', 'hypothesis', 'preference')),
    embedding_model TEXT    NOT NULL,
    -- little-endian float32, unit length, dims of them
    embedding       BLOB    NOT NULL,
    dims            INTEGER NOT NULL CHECK (dims > 0 AND length(embedding) = 4 * dims),
    -- sha256 of the normalised (and redacted) text
    content_hash    TEXT    NOT NULL,
    run_id          TEXT    NOT NULL DEFAULT '',
    event_id        TEXT    NOT NULL DEFAULT '',
    reality         TEXT    NOT NULL CHECK (reality IN ('external_real', 'world_local')),
    world_id        TEXT    NOT NULL DEFAULT '',
    weight          REAL    NOT NULL CHECK (weight >= 0 AND weight <= 1),
    merged_count    INTEGER NOT NULL DEFAULT 0 CHECK (merged_count >= 0),
    created_at      BIGINT  NOT NULL,
    merged_at       BIGINT  NOT NULL DEFAULT 0,
    updated_at      BIGINT  NOT NULL,
    -- A world-local result is only ever a hypothesis that names its world.
    CHECK (reality = 'external_real' OR (type = 'hypothesis' AND world_id <> ''))
);
CREATE INDEX memories_hash ON memories (content_hash);
CREATE INDEX memories_model ON memories (embedding_model, updated_at);
CREATE INDEX memories_run ON memories (run_id);
CREATE INDEX memories_created ON memories (created_at);

CREATE TABLE memory_sources (
    id           INTEGER NOT NULL PRIMARY KEY,
    memory_id    TEXT    NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    run_id       TEXT    NOT NULL DEFAULT '',
    event_id     TEXT    NOT NULL DEFAULT '',
    reality      TEXT    NOT NULL CHECK (reality IN ('external_real', 'world_local')),
    world_id     TEXT    NOT NULL DEFAULT '',
    critic_score REAL    NOT NULL,
    worth        REAL    NOT NULL,
    added_at     BIGINT  NOT NULL
);
CREATE INDEX memory_sources_memory ON memory_sources (memory_id, id);

-- One row: the embedding model the index was last completely built with,
-- and a generation that every change to memories advances, so a snapshot
-- of the index can tell whether it still describes the table.
CREATE TABLE memory_state (
    id              INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    embedding_model TEXT    NOT NULL DEFAULT '',
    generation      BIGINT  NOT NULL DEFAULT 0
);
INSERT INTO memory_state (id, embedding_model, generation) VALUES (1, '', 0);

-- +goose StatementBegin
CREATE TRIGGER memories_generation_insert AFTER INSERT ON memories
BEGIN
    UPDATE memory_state SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER memories_generation_update AFTER UPDATE ON memories
BEGIN
    UPDATE memory_state SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER memories_generation_delete AFTER DELETE ON memories
BEGIN
    UPDATE memory_state SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER memories_generation_delete;
DROP TRIGGER memories_generation_update;
DROP TRIGGER memories_generation_insert;
DROP TABLE memory_state;
DROP TABLE memory_sources;
DROP TABLE memories;
