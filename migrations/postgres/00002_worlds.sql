-- Worlds on PostgreSQL: the same tables as ../00002_worlds.sql.

-- +goose Up
CREATE TABLE world_specs (
    id                   TEXT    COLLATE "C" NOT NULL PRIMARY KEY,
    name                 TEXT    NOT NULL,
    domain               TEXT    NOT NULL CHECK (domain IN ('real', 'simulated')),
    backend              TEXT    NOT NULL,
    program_digest       TEXT    NOT NULL DEFAULT '',
    program_size         BIGINT  NOT NULL DEFAULT 0,
    initial_state_digest TEXT    NOT NULL DEFAULT '',
    params               TEXT    NOT NULL DEFAULT '{}',
    seed                 BIGINT  NOT NULL DEFAULT 0 CHECK (seed >= 0),
    parent_world_id      TEXT    COLLATE "C" REFERENCES world_specs (id) DEFERRABLE INITIALLY IMMEDIATE,
    fork_id              TEXT    NOT NULL DEFAULT '',
    created_at           BIGINT  NOT NULL
);
CREATE INDEX world_specs_parent ON world_specs (parent_world_id);
CREATE INDEX world_specs_created ON world_specs (created_at, id);

CREATE TRIGGER world_specs_immutable_update BEFORE UPDATE ON world_specs
    FOR EACH ROW EXECUTE FUNCTION ducklm_refuse('world specs');
CREATE TRIGGER world_specs_immutable_delete BEFORE DELETE ON world_specs
    FOR EACH ROW EXECUTE FUNCTION ducklm_refuse('world specs');
CREATE TRIGGER world_specs_immutable_truncate BEFORE TRUNCATE ON world_specs
    FOR EACH STATEMENT EXECUTE FUNCTION ducklm_refuse('world specs');

CREATE TABLE world_runs (
    id                   TEXT    COLLATE "C" NOT NULL PRIMARY KEY,
    world_id             TEXT    COLLATE "C" NOT NULL REFERENCES world_specs (id) DEFERRABLE INITIALLY IMMEDIATE,
    status               TEXT    NOT NULL CHECK (status IN ('pending', 'running', 'paused', 'awaiting_approval', 'completed', 'failed', 'terminated')),
    world_local_time     BIGINT  NOT NULL DEFAULT 0,
    parent_time          BIGINT  NOT NULL DEFAULT 0,
    deliberation_index   BIGINT  NOT NULL DEFAULT 0,
    base_run_id          TEXT    COLLATE "C" REFERENCES world_runs (id) DEFERRABLE INITIALLY IMMEDIATE,
    base_seq             BIGINT  NOT NULL DEFAULT 0,
    latest_checkpoint_id TEXT    NOT NULL DEFAULT '',
    error                TEXT    NOT NULL DEFAULT '',
    created_at           BIGINT  NOT NULL,
    updated_at           BIGINT  NOT NULL
);
CREATE INDEX world_runs_world ON world_runs (world_id, created_at);
CREATE INDEX world_runs_status ON world_runs (status, updated_at);

CREATE TABLE checkpoints (
    id               TEXT    COLLATE "C" NOT NULL PRIMARY KEY,
    world_id         TEXT    COLLATE "C" NOT NULL REFERENCES world_specs (id) DEFERRABLE INITIALLY IMMEDIATE,
    run_id           TEXT    COLLATE "C" NOT NULL REFERENCES world_runs (id) DEFERRABLE INITIALLY IMMEDIATE,
    world_local_time BIGINT  NOT NULL,
    ledger_seq       BIGINT  NOT NULL,
    digest           TEXT    NOT NULL,
    size             BIGINT  NOT NULL,
    created_at       BIGINT  NOT NULL
);
CREATE INDEX checkpoints_run ON checkpoints (run_id, ledger_seq);

CREATE TRIGGER checkpoints_immutable_update BEFORE UPDATE ON checkpoints
    FOR EACH ROW EXECUTE FUNCTION ducklm_refuse('checkpoints');

CREATE TABLE forks (
    id               TEXT    COLLATE "C" NOT NULL PRIMARY KEY,
    parent_world_id  TEXT    COLLATE "C" NOT NULL REFERENCES world_specs (id) DEFERRABLE INITIALLY IMMEDIATE,
    parent_run_id    TEXT    COLLATE "C" NOT NULL REFERENCES world_runs (id) DEFERRABLE INITIALLY IMMEDIATE,
    checkpoint_id    TEXT    COLLATE "C" NOT NULL REFERENCES checkpoints (id) DEFERRABLE INITIALLY IMMEDIATE,
    child_world_id   TEXT    COLLATE "C" NOT NULL UNIQUE REFERENCES world_specs (id) DEFERRABLE INITIALLY IMMEDIATE,
    divergence_type  TEXT    NOT NULL CHECK (divergence_type IN ('state_patch', 'action_override', 'seed_change', 'program_change', 'parameter_change', 'plan_edit')),
    delta            TEXT    NOT NULL DEFAULT '{}',
    seed_policy      TEXT    NOT NULL CHECK (seed_policy IN ('inherit', 'derive', 'fresh')),
    created_at       BIGINT  NOT NULL
);
CREATE INDEX forks_parent ON forks (parent_world_id);

CREATE TRIGGER forks_immutable_update BEFORE UPDATE ON forks
    FOR EACH ROW EXECUTE FUNCTION ducklm_refuse('fork records');

-- +goose Down
DROP TABLE forks;
DROP TABLE checkpoints;
DROP TABLE world_runs;
DROP TABLE world_specs;
