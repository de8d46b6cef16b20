-- The event ledger: the source of truth. Streams are world runs; each has a
-- gap-free seq and one reality that every one of its events shares.

-- +goose Up
CREATE TABLE streams (
    id         TEXT    NOT NULL PRIMARY KEY,
    reality    TEXT    NOT NULL CHECK (reality IN ('external_real', 'world_local')),
    head_seq   BIGINT  NOT NULL DEFAULT 0 CHECK (head_seq >= 0),
    created_at BIGINT  NOT NULL
);

CREATE TABLE events (
    pos                INTEGER NOT NULL PRIMARY KEY,
    id                 TEXT    NOT NULL UNIQUE,
    stream_id          TEXT    NOT NULL REFERENCES streams (id),
    seq                BIGINT  NOT NULL CHECK (seq >= 1),
    type               TEXT    NOT NULL,
    schema_version     INTEGER NOT NULL DEFAULT 1,
    payload            TEXT    NOT NULL,
    reality            TEXT    NOT NULL CHECK (reality IN ('external_real', 'world_local')),
    causation_id       TEXT    NOT NULL DEFAULT '',
    correlation_id     TEXT    NOT NULL DEFAULT '',
    recorded_at        BIGINT  NOT NULL,
    parent_time        BIGINT  NOT NULL DEFAULT 0,
    deliberation_index BIGINT  NOT NULL DEFAULT 0,
    world_local_time   BIGINT  NOT NULL DEFAULT 0,
    UNIQUE (stream_id, seq)
);

CREATE INDEX events_type_pos ON events (type, pos);

-- Events are immutable facts: the database itself refuses to change them.
-- +goose StatementBegin
CREATE TRIGGER events_immutable_update BEFORE UPDATE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are immutable: UPDATE refused');
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER events_immutable_delete BEFORE DELETE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are immutable: DELETE refused');
END;
-- +goose StatementEnd

-- A stream's reality is fixed when it is created.
-- +goose StatementBegin
CREATE TRIGGER streams_reality_fixed BEFORE UPDATE OF reality ON streams
WHEN NEW.reality <> OLD.reality
BEGIN
    SELECT RAISE(ABORT, 'a stream''s reality cannot change');
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER streams_reality_fixed;
DROP TRIGGER events_immutable_delete;
DROP TRIGGER events_immutable_update;
DROP INDEX events_type_pos;
DROP TABLE events;
DROP TABLE streams;
