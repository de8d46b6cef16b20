package service

import (
	"context"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/bus"
	"ducklm/backend/sqlite"
	"ducklm/backend/starlark"
	"ducklm/backend/world"
)

// Service is an open data directory and the services wired on it.
type Service struct {
	Dir    string
	DB     *sqlite.DB
	Ledger *sqlite.Ledger
	Bus    *bus.Bus
	Blobs  *blob.Store
	Worlds *world.Service
}

// Open opens the data directory dir (creating it when new) and applies the
// schema migrations. The caller decides whether to hold the directory's Lock.
func Open(ctx context.Context, dir string) (*Service, error) {
	db, err := sqlite.Open(ctx, dbPath(dir))
	if err != nil {
		return nil, err
	}
	blobs, err := blob.Open(blobDir(dir))
	if err != nil {
		db.Close()
		return nil, err
	}
	ledger := sqlite.NewLedger(db)
	b := bus.New(ledger)
	ledger.OnCommit(b.Publish)
	worlds := world.New(sqlite.NewWorlds(db, ledger), ledger, blobs, starlark.DefaultLimits())
	return &Service{Dir: dir, DB: db, Ledger: ledger, Bus: b, Blobs: blobs, Worlds: worlds}, nil
}

// Close closes the database.
func (s *Service) Close() error { return s.DB.Close() }

// Counts are the sizes of what the data directory holds.
type Counts struct {
	Worlds  int64 `json:"worlds"`
	Runs    int64 `json:"runs"`
	Streams int64 `json:"streams"`
	Events  int64 `json:"events"`
}

// Overview is what the first screen shows: where the data is, which schema
// it has, how much it holds and what happened last.
type Overview struct {
	Version             string          `json:"version"`
	DataDir             string          `json:"dataDir"`
	DatabasePath        string          `json:"databasePath"`
	SchemaVersion       int64           `json:"schemaVersion"`
	LatestSchemaVersion int64           `json:"latestSchemaVersion"`
	Counts              Counts          `json:"counts"`
	RecentEvents        []backend.Event `json:"recentEvents"`
}

// Overview reads the overview from the ledger and registries.
func (s *Service) Overview(ctx context.Context, recent int) (Overview, error) {
	o := Overview{
		Version:             backend.Version,
		DataDir:             s.Dir,
		DatabasePath:        s.DB.Path,
		LatestSchemaVersion: sqlite.LatestSchemaVersion(),
	}
	var err error
	if o.SchemaVersion, err = s.DB.SchemaVersion(ctx); err != nil {
		return o, err
	}
	if o.Counts, err = s.counts(ctx); err != nil {
		return o, err
	}
	if o.RecentEvents, err = s.Ledger.Recent(ctx, recent); err != nil {
		return o, err
	}
	return o, nil
}

func (s *Service) counts(ctx context.Context) (Counts, error) {
	var c Counts
	row := s.DB.SQL.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM world_specs),
		(SELECT count(*) FROM world_runs),
		(SELECT count(*) FROM streams)`)
	if err := row.Scan(&c.Worlds, &c.Runs, &c.Streams); err != nil {
		return c, backend.Wrap(err, backend.EINTERNAL, "cannot count what the data directory holds")
	}
	var err error
	c.Events, err = s.Ledger.Count(ctx)
	return c, err
}
