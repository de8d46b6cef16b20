-- Events are no longer indexed by (type, pos). Every read that filters by
-- type also names its stream (the runtime's approvals and memory offers,
-- world history and its search, deliberation rounds, `ducklm world events`),
-- and so ranges over the (stream_id, seq) unique index; no read filters by
-- type across the whole ledger. The index cost every event an entry
-- (~140 B of a trivial step's ~3.8 KB, issue 28) and an index write per
-- append, and served no query. Down makes it again.

-- +goose Up
DROP INDEX IF EXISTS events_type_pos;

-- +goose Down
CREATE INDEX events_type_pos ON events (type, pos);
