-- Blobs in the database: content-addressed (sha256), so every machine of a
-- team reads the same bytes. A blob never changes once stored.

-- +goose Up
CREATE TABLE blobs (
    digest     TEXT    COLLATE "C" NOT NULL PRIMARY KEY,
    size       BIGINT  NOT NULL CHECK (size >= 0 AND size = octet_length(data)),
    data       BYTEA   NOT NULL,
    created_at BIGINT  NOT NULL
);
ALTER TABLE blobs ALTER COLUMN data SET STORAGE EXTERNAL;

CREATE TRIGGER blobs_immutable_update BEFORE UPDATE ON blobs
    FOR EACH ROW EXECUTE FUNCTION ducklm_refuse('blobs');

-- +goose Down
DROP TABLE blobs;
