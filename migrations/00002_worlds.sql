-- Worlds: immutable specs, their runs, exact checkpoints and the fork lineage.
-- A task run is a run of a world in the 'real' domain; a simulated world is a
-- deterministic state machine. Both share these tables.

-- +goose Up
CREATE TABLE world_specs (
    id                   TEXT    NOT NULL PRIMARY KEY,
    name                 TEXT    NOT NULL,
    domain               TEXT    NOT NULL CHECK (domain IN ('real', 'simulated')),
    backend              TEXT    NOT NULL,
    program_digest       TEXT    NOT NULL DEFAULT '',
    program_size         BIGINT  NOT NULL DEFAULT 0,
    initial_state_digest TEXT    NOT NULL DEFAULT '',
    params               TEXT    NOT NULL DEFAULT '{}',
    seed                 BIGINT  NOT NULL DEFAULT 0 CHECK (seed >= 0),
    parent_world_id      TEXT    REFERENCES world_specs (id),
    fork_id              TEXT    NOT NULL DEFAULT '',
    created_at           BIGINT  NOT NULL
);
CREATE INDEX world_specs_parent ON world_specs (parent_world_id);

-- +goose StatementBegin
CREATE TRIGGER world_specs_immutable_update BEFORE UPDATE ON world_specs
BEGIN
    SELECT RAISE(ABORT, 'world specs are immutable: UPDATE refused');
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER world_specs_immutable_delete BEFORE DELETE ON world_specs
BEGIN
    SELECT RAISE(ABORT, 'world specs are immutable: DELETE refused');
END;
-- +goose StatementEnd

CREATE TABLE world_runs (
    id                   TEXT    NOT NULL PRIMARY KEY,
    world_id             TEXT    NOT NULL REFERENCES world_specs (id),
    status               TEXT    NOT NULL CHECK (status IN ('pending', 'running', 'paused', 'awaiting_approval', 'completed', 'failed', 'terminated')),
    world_local_time     BIGINT  NOT NULL DEFAULT 0,
    parent_time          BIGINT  NOT NULL DEFAULT 0,
    deliberation_index   BIGINT  NOT NULL DEFAULT 0,
    base_run_id          TEXT    REFERENCES world_runs (id),
    base_seq             BIGINT  NOT NULL DEFAULT 0,
    latest_checkpoint_id TEXT    NOT NULL DEFAULT '',
    error                TEXT    NOT NULL DEFAULT '',
    created_at           BIGINT  NOT NULL,
    updated_at           BIGINT  NOT NULL
);
CREATE INDEX world_runs_world ON world_runs (world_id, created_at);
CREATE INDEX world_runs_status ON world_runs (status, updated_at);

CREATE TABLE checkpoints (
    id               TEXT    NOT NULL PRIMARY KEY,
    world_id         TEXT    NOT NULL REFERENCES world_specs (id),
    run_id           TEXT    NOT NULL REFERENCES world_runs (id),
    world_local_time BIGINT  NOT NULL,
    ledger_seq       BIGINT  NOT NULL,
    digest           TEXT    NOT NULL,
    size             BIGINT  NOT NULL,
    created_at       BIGINT  NOT NULL
);
CREATE INDEX checkpoints_run ON checkpoints (run_id, ledger_seq);

-- +goose StatementBegin
CREATE TRIGGER checkpoints_immutable_update BEFORE UPDATE ON checkpoints
BEGIN
    SELECT RAISE(ABORT, 'checkpoints are immutable: UPDATE refused');
END;
-- +goose StatementEnd

CREATE TABLE forks (
    id               TEXT    NOT NULL PRIMARY KEY,
    parent_world_id  TEXT    NOT NULL REFERENCES world_specs (id),
    parent_run_id    TEXT    NOT NULL REFERENCES world_runs (id),
    checkpoint_id    TEXT    NOT NULL REFERENCES checkpoints (id),
    child_world_id   TEXT    NOT NULL UNIQUE REFERENCES world_specs (id),
    divergence_type  TEXT    NOT NULL CHECK (divergence_type IN ('state_patch', 'action_override', 'seed_change', 'program_change', 'parameter_change', 'plan_edit')),
    delta            TEXT    NOT NULL DEFAULT '{}',
    seed_policy      TEXT    NOT NULL CHECK (seed_policy IN ('inherit', 'derive', 'fresh')),
    created_at       BIGINT  NOT NULL
);
CREATE INDEX forks_parent ON forks (parent_world_id);

-- +goose StatementBegin
CREATE TRIGGER forks_immutable_update BEFORE UPDATE ON forks
BEGIN
    SELECT RAISE(ABORT, 'fork records are immutable: UPDATE refused');
END;
-- +goose StatementEnd

-- +goose Down
DROP TABLE forks;
DROP TABLE checkpoints;
DROP TABLE world_runs;
DROP TABLE world_specs;
