package service

import (
	"os"

	"ducklm/backend"
	"ducklm/backend/settings"
	"ducklm/backend/store/postgres"
)

// Where a database choice comes from, strongest first.
const (
	// DatabaseFromOptions is a choice the caller made (a test, a worker's flag).
	DatabaseFromOptions = "options"
	// DatabaseFromEnvironment is $DUCKLM_DATABASE_URL, which --database-url sets.
	DatabaseFromEnvironment = "environment"
	// DatabaseFromSettings is the address the window's Settings stored.
	DatabaseFromSettings = "settings"
	// DatabaseDefault is the data directory's own SQLite database.
	DatabaseDefault = "default"
)

// DatabaseChoice is the database a data directory opens, and why.
type DatabaseChoice struct {
	// URL is the PostgreSQL address, password included; "" for SQLite.
	URL string
	// Source says who chose it: one of the Database… constants.
	Source string
}

// ChooseDatabase decides which database dir opens: Options.DatabaseURL,
// else $DUCKLM_DATABASE_URL (or --database-url), else the address stored
// by Settings, else the data directory's SQLite file. The environment wins
// over Settings so that a command line or a unit file can always say where
// the team's data is, whatever a window stored.
func ChooseDatabase(dir string, opts Options) (DatabaseChoice, error) {
	if opts.DatabaseURL != "" {
		return DatabaseChoice{URL: opts.DatabaseURL, Source: DatabaseFromOptions}, nil
	}
	if u := os.Getenv(DatabaseURLEnv); u != "" {
		return DatabaseChoice{URL: u, Source: DatabaseFromEnvironment}, nil
	}
	u, err := settings.LoadDatabase(dir)
	if err != nil {
		return DatabaseChoice{}, err
	}
	if u != "" {
		if !postgres.IsURL(u) {
			return DatabaseChoice{}, backend.Errorf(backend.EINVALID,
				"the database setting %q is not a PostgreSQL address; fix it in Settings, or remove %s/database-url", postgres.Redact(u), dir)
		}
		return DatabaseChoice{URL: u, Source: DatabaseFromSettings}, nil
	}
	return DatabaseChoice{Source: DatabaseDefault}, nil
}

// Database returns the database this service opened and why.
func (s *Service) Database() DatabaseChoice { return s.database }

// Shared reports whether the service's database is a team's PostgreSQL.
func (s *Service) Shared() bool { return s.database.URL != "" }

// SaveDatabase stores the database address for the next start ("" for
// this machine's SQLite). It does not switch the open database: runs in
// progress write to it, and moving them mid-run would split their history
// across two databases.
func (s *Service) SaveDatabase(url string) error {
	s.settingsMu.Lock()
	defer s.settingsMu.Unlock()
	return settings.SaveDatabase(s.Dir, url)
}
