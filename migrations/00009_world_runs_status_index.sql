-- Runs are no longer indexed by (status, updated_at). No read filters or
-- orders runs by either: a run is read by id (the primary key), a world's
-- runs and the world list's newest run, counts and branch test by
-- (world_id, created_at), and the runs to resume at start are all task runs
-- (ListRunsOfBackend), whose status is tested in Go. EXPLAIN QUERY PLAN on
-- SQLite showed no query using the index, and the same plans without it.
-- Every run update sets updated_at, so every step's commit rewrote the
-- index's entry (a page written per commit, issue 28) for no query.
-- Down makes it again.

-- +goose Up
DROP INDEX IF EXISTS world_runs_status;

-- +goose Down
CREATE INDEX world_runs_status ON world_runs (status, updated_at);
