package service

import (
	"context"
	"slices"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/bundle"
	"ducklm/backend/store"
)

// LocalRoot is a world at the top of the local lineage: a task run's world
// or a simulated world that was not forked from another. Copying it as a
// bundle with its descendants copies every world forked from it.
type LocalRoot struct {
	ID     string         `json:"id"`
	Name   string         `json:"name"`
	Domain backend.Domain `json:"domain"`
	// Unfinished is the status of a task run that has not ended ("" for a
	// finished one and for simulated worlds): bundles carry only finished
	// task runs, since a moving one would go on running in two places.
	Unfinished backend.RunStatus `json:"unfinished,omitempty"`
}

// Local is this data directory's own SQLite database and blob folder,
// opened for reading only by an installation that runs on a team's
// PostgreSQL: what it holds, and bundles of it. Nothing here writes to it.
type Local struct {
	Path   string
	Counts Counts
	// Roots are the local lineage's roots, oldest first.
	Roots []LocalRoot
	db    *store.DB
	data  bundle.Local
}

// OpenLocal opens the data directory's SQLite database read-only, with its
// blob folder. It is for an installation on a team's database: on the
// local database itself it is refused (there is nothing to copy it to). A
// data directory that never had one is ENOTFOUND.
func (s *Service) OpenLocal(ctx context.Context) (*Local, error) {
	path := dbPath(s.Dir)
	if !s.Shared() {
		return nil, backend.Errorf(backend.EINVALID, "ducklm uses this machine's database %s now; there is no team database to copy it to", path)
	}
	db, err := store.OpenReadOnly(ctx, path)
	if err != nil {
		return nil, err
	}
	blobs, err := blob.Open(blobDir(s.Dir))
	if err != nil {
		db.Close()
		return nil, err
	}
	ledger := store.NewLedger(db)
	worlds := store.NewWorlds(db, ledger)
	l := &Local{Path: path, db: db, data: bundle.Local{Store: worlds, Events: ledger, Blobs: blobs,
		Programs: s.Worlds.Runner(), WorldLimits: s.Worlds.Limits()}}
	if l.Counts, err = countsOf(ctx, db, ledger); err != nil {
		db.Close()
		return nil, err
	}
	specs, err := worlds.ListSpecs(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	slices.SortStableFunc(specs, func(a, b backend.WorldSpec) int { return a.CreatedAt.Compare(b.CreatedAt) })
	for _, sp := range specs {
		if sp.ParentWorldID != "" {
			continue
		}
		root := LocalRoot{ID: sp.ID, Name: sp.Name, Domain: sp.Domain}
		if sp.Domain == backend.DomainReal {
			runs, err := worlds.ListRuns(ctx, sp.ID)
			if err != nil {
				db.Close()
				return nil, err
			}
			for _, r := range runs {
				if !r.Status.Terminal() {
					root.Unfinished = r.Status
				}
			}
		}
		l.Roots = append(l.Roots, root)
	}
	return l, nil
}

// Export writes the bundle of root with every world forked from it to
// path, signed with the key of data directory keyDir (so that its own
// import trusts it).
func (l *Local) Export(ctx context.Context, root, path, keyDir string, progress func(bundle.Progress)) (bundle.Exported, error) {
	return bundle.ExportFile(ctx, l.data, root, path, bundle.FileOptions{KeyDir: keyDir,
		ExportOptions: bundle.ExportOptions{Descendants: true, Progress: progress}})
}

// Close closes the local database.
func (l *Local) Close() error { return l.db.Close() }
