-- Blobs in the database: content-addressed (sha256). An installation on
-- SQLite keeps its blobs in the sharded folder blobs/ and leaves this table
-- empty; it exists so that both databases have one schema (the team server
-- on PostgreSQL keeps its blobs here, see migrations/postgres/).

-- +goose Up
CREATE TABLE blobs (
    digest     TEXT    NOT NULL PRIMARY KEY,
    size       BIGINT  NOT NULL CHECK (size >= 0 AND size = length(data)),
    data       BLOB    NOT NULL,
    created_at BIGINT  NOT NULL
);

-- +goose StatementBegin
CREATE TRIGGER blobs_immutable_update BEFORE UPDATE ON blobs
BEGIN
    SELECT RAISE(ABORT, 'blobs are immutable: UPDATE refused');
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER blobs_immutable_update;
DROP TABLE blobs;
