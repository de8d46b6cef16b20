-- Each `ducklm worker` process keeps one row: who it is, when it last said
-- it was alive, and the jobs it is running (a JSON array), so the window
-- can list a team's workers. A row is the worker's own; nothing else
-- writes it. Times are Unix milliseconds.

-- +goose Up
CREATE TABLE workers (
    id TEXT NOT NULL PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    slots INTEGER NOT NULL,
    version TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL,
    stopped_at BIGINT NOT NULL DEFAULT 0,
    jobs TEXT NOT NULL DEFAULT '[]',
    done BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX workers_heartbeat ON workers (heartbeat_at);

-- +goose Down
DROP TABLE workers;
