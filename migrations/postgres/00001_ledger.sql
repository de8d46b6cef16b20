-- The event ledger on PostgreSQL: the same tables as ../00001_ledger.sql,
-- written for PostgreSQL. Ids and text that is sorted or paged compare
-- bytewise (COLLATE "C"), as they do in SQLite, so both databases list and
-- export in one order. Foreign keys are DEFERRABLE so that an import can
-- check them at commit (SQLite's defer_foreign_keys).

-- +goose Up
CREATE TABLE streams (
    id         TEXT    COLLATE "C" NOT NULL PRIMARY KEY,
    reality    TEXT    NOT NULL CHECK (reality IN ('external_real', 'world_local')),
    head_seq   BIGINT  NOT NULL DEFAULT 0 CHECK (head_seq >= 0),
    created_at BIGINT  NOT NULL
);

CREATE TABLE events (
    pos                BIGINT  NOT NULL PRIMARY KEY,
    id                 TEXT    COLLATE "C" NOT NULL,
    stream_id          TEXT    COLLATE "C" NOT NULL REFERENCES streams (id) DEFERRABLE INITIALLY IMMEDIATE,
    seq                BIGINT  NOT NULL CHECK (seq >= 1),
    type               TEXT    COLLATE "C" NOT NULL,
    schema_version     INTEGER NOT NULL DEFAULT 1,
    payload            TEXT    NOT NULL,
    reality            TEXT    NOT NULL CHECK (reality IN ('external_real', 'world_local')),
    causation_id       TEXT    NOT NULL DEFAULT '',
    correlation_id     TEXT    NOT NULL DEFAULT '',
    recorded_at        BIGINT  NOT NULL,
    parent_time        BIGINT  NOT NULL DEFAULT 0,
    deliberation_index BIGINT  NOT NULL DEFAULT 0,
    world_local_time   BIGINT  NOT NULL DEFAULT 0,
    CONSTRAINT events_id_key UNIQUE (id),
    CONSTRAINT events_stream_seq_key UNIQUE (stream_id, seq)
);

CREATE INDEX events_type_pos ON events (type, pos);

-- Events are immutable facts: the database itself refuses to change them.
-- +goose StatementBegin
CREATE FUNCTION ducklm_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% are immutable: % refused', TG_ARGV[0], TG_OP USING ERRCODE = 'restrict_violation';
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER events_immutable_update BEFORE UPDATE ON events
    FOR EACH ROW EXECUTE FUNCTION ducklm_refuse('events');
CREATE TRIGGER events_immutable_delete BEFORE DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION ducklm_refuse('events');
CREATE TRIGGER events_immutable_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION ducklm_refuse('events');

-- A stream's reality is fixed when it is created.
-- +goose StatementBegin
CREATE FUNCTION ducklm_stream_reality_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'a stream''s reality cannot change' USING ERRCODE = 'restrict_violation';
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER streams_reality_fixed BEFORE UPDATE OF reality ON streams
    FOR EACH ROW WHEN (NEW.reality <> OLD.reality) EXECUTE FUNCTION ducklm_stream_reality_fixed();

-- +goose Down
DROP TRIGGER streams_reality_fixed ON streams;
DROP FUNCTION ducklm_stream_reality_fixed();
DROP TABLE events;
DROP TABLE streams;
DROP FUNCTION ducklm_refuse();
