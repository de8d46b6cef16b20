-- A memory of what a server answered (web_fetch, browser) keeps the URL
-- and the time of the answer as provenance: an external-real fact about
-- that URL at that time. Empty and 0 for every other memory.

-- +goose Up
ALTER TABLE memories ADD COLUMN source_url TEXT NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN observed_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE memory_sources ADD COLUMN source_url TEXT NOT NULL DEFAULT '';
ALTER TABLE memory_sources ADD COLUMN observed_at BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE memory_sources DROP COLUMN observed_at;
ALTER TABLE memory_sources DROP COLUMN source_url;
ALTER TABLE memories DROP COLUMN observed_at;
ALTER TABLE memories DROP COLUMN source_url;
