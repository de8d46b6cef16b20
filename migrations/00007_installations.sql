-- Every installation (data directory) that opens this database keeps one
-- row: its id, its host's name for people, when it first and last opened
-- the database. On a team's PostgreSQL it tells a run's owner that is on
-- the team from one that is not (a run imported from a bundle made
-- elsewhere), which decides who drives a fork of it (docs/team-server.md,
-- "Who drives a task run"). Times are Unix milliseconds.

-- +goose Up
CREATE TABLE installations (
    id TEXT NOT NULL PRIMARY KEY,
    host TEXT NOT NULL,
    first_seen_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE installations;
