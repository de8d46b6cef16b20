package api

import (
	"strconv"
	"strings"

	"ducklm/backend"
	"ducklm/backend/service"
	"ducklm/backend/settings"
	"ducklm/backend/store/postgres"
)

// DatabaseView is the Settings screen's Database field. No field ever
// carries a password.
type DatabaseView struct {
	// Address is the stored address without its password; "" means this
	// machine's SQLite database in the data directory.
	Address string `json:"address"`
	// PasswordStored says the stored address has a password.
	PasswordStored bool `json:"passwordStored"`
	// InUse names the database this process opened (the PostgreSQL address
	// without its password, or the SQLite file), and Shared says which.
	InUse  string `json:"inUse"`
	Shared bool   `json:"shared"`
	// Override is set when DUCKLM_DATABASE_URL (or --database-url) chose the
	// database: the field applies only once it is unset. It names the
	// variable; OverrideAddress is its address without the password.
	Override        string `json:"override"`
	OverrideAddress string `json:"overrideAddress"`
	// NextStart says what the next start opens, when that differs from what
	// is in use ("" when nothing changes).
	NextStart string `json:"nextStart"`
	// Local is, on a team's database, this machine's own database, which
	// ducklm leaves as it was (nil on the local database itself).
	Local *LocalDataView `json:"local,omitempty"`
	// CanRestart says "Restart now" can start ducklm again (the desktop
	// window); in a browser the person restarts `ducklm serve`.
	CanRestart bool `json:"canRestart"`
}

// DatabaseInput is what the Database field sends: an address, and a
// password typed apart from it. An empty Password keeps the stored one
// (the field never shows it); a password inside Address is taken too.
type DatabaseInput struct {
	Address  string `json:"address"`
	Password string `json:"password"`
}

// DatabaseTest is the answer of "Test connection": a sentence, and what it
// learnt.
type DatabaseTest struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
	// ServerVersion and SchemaVersion are filled when the server answered.
	ServerVersion       string `json:"serverVersion"`
	SchemaVersion       int64  `json:"schemaVersion"`
	LatestSchemaVersion int64  `json:"latestSchemaVersion"`
}

// GetDatabase returns the Database field's state.
func (a *API) GetDatabase() (DatabaseView, error) {
	if err := a.ready(); err != nil {
		return DatabaseView{}, err
	}
	v, err := a.databaseView()
	return v, a.fail("database setting", err)
}

func (a *API) databaseView() (DatabaseView, error) {
	stored, err := settings.LoadDatabase(a.svc.Dir)
	if err != nil {
		return DatabaseView{}, err
	}
	choice := a.svc.Database()
	v := DatabaseView{InUse: a.svc.DB.Path, Shared: a.svc.Shared(), CanRestart: a.CanRestart()}
	if v.Shared {
		v.InUse, _ = postgres.WithoutPassword(choice.URL)
		v.Local = a.localData()
	}
	v.Address, _ = postgres.WithoutPassword(stored)
	_, pw := postgres.WithoutPassword(stored)
	v.PasswordStored = pw != ""
	next := service.DatabaseChoice{URL: stored, Source: service.DatabaseFromSettings}
	switch choice.Source {
	case service.DatabaseFromEnvironment, service.DatabaseFromOptions:
		v.Override = service.DatabaseURLEnv
		v.OverrideAddress, _ = postgres.WithoutPassword(choice.URL)
		next = choice
	}
	if next.URL != choice.URL {
		if next.URL == "" {
			v.NextStart = "this machine's SQLite database in " + a.svc.Dir
		} else {
			v.NextStart, _ = postgres.WithoutPassword(next.URL)
		}
	}
	return v, nil
}

// full is the address in, with the stored password when none was typed.
func (a *API) full(in DatabaseInput) (string, error) {
	addr := strings.TrimSpace(in.Address)
	if addr == "" {
		return "", nil
	}
	if !postgres.IsURL(addr) {
		return "", backend.Errorf(backend.EINVALID,
			"%q is not a PostgreSQL address: it starts with postgres://, e.g. postgres://ducklm@db.example:5432/ducklm (or leave it empty for this machine's SQLite database)",
			postgres.Redact(addr))
	}
	if in.Password != "" {
		return postgres.WithPassword(addr, in.Password), nil
	}
	if _, pw := postgres.WithoutPassword(addr); pw != "" {
		return addr, nil
	}
	stored, err := settings.LoadDatabase(a.svc.Dir)
	if err != nil {
		return "", err
	}
	if _, pw := postgres.WithoutPassword(stored); pw != "" {
		return postgres.WithPassword(addr, pw), nil
	}
	return addr, nil
}

// TestDatabase connects to the address in (nothing is stored or changed
// there) and answers with a sentence: the server's version and the schema
// ducklm would find, or why it cannot be used.
func (a *API) TestDatabase(in DatabaseInput) (DatabaseTest, error) {
	if err := a.ready(); err != nil {
		return DatabaseTest{}, err
	}
	url, err := a.full(in)
	if err != nil {
		return DatabaseTest{}, a.fail("test database", err)
	}
	if url == "" {
		return DatabaseTest{OK: true, Message: "An empty address is this machine's SQLite database in " + a.svc.Dir + ": nothing to connect to."}, nil
	}
	p, err := postgres.Check(a.ctx(), url)
	t := DatabaseTest{ServerVersion: p.ServerVersion, SchemaVersion: p.SchemaVersion, LatestSchemaVersion: p.LatestSchemaVersion}
	if err != nil {
		a.log.Info("test database", "code", backend.ErrorCode(err), "err", err)
		t.Message = backend.ErrorMessage(err)
		return t, nil
	}
	t.OK = true
	name, _ := postgres.WithoutPassword(url)
	version, _, _ := strings.Cut(p.ServerVersion, " ")
	switch {
	case p.SchemaVersion == 0:
		t.Message = "Reachable: PostgreSQL " + version + " at " + name + ". Its database is empty; ducklm creates its tables (schema " +
			itoa(p.LatestSchemaVersion) + ") when it first starts on it."
	case p.SchemaVersion < p.LatestSchemaVersion:
		t.Message = "Reachable: PostgreSQL " + version + " at " + name + ", ducklm schema " + itoa(p.SchemaVersion) +
			"; this ducklm brings it to schema " + itoa(p.LatestSchemaVersion) + " when it starts on it (older ducklm installations on the team then refuse it until they are upgraded)."
	default:
		t.Message = "Reachable: PostgreSQL " + version + " at " + name + ", ducklm schema " + itoa(p.SchemaVersion) + ", this ducklm's."
	}
	return t, nil
}

// DatabaseSaved is what saving the Database field did.
type DatabaseSaved struct {
	Database DatabaseView `json:"database"`
	// Message says when the choice takes effect.
	Message string `json:"message"`
}

// SaveDatabase stores the address for the next start; an empty address
// goes back to this machine's SQLite database. The open database is not
// switched: runs in progress write to it, and moving them mid-run would
// split their history across two databases.
func (a *API) SaveDatabase(in DatabaseInput) (DatabaseSaved, error) {
	if err := a.ready(); err != nil {
		return DatabaseSaved{}, err
	}
	url, err := a.full(in)
	if err != nil {
		return DatabaseSaved{}, a.fail("save database", err)
	}
	if err := a.svc.SaveDatabase(url); err != nil {
		return DatabaseSaved{}, a.fail("save database", err)
	}
	v, err := a.databaseView()
	if err != nil {
		return DatabaseSaved{}, a.fail("database setting", err)
	}
	var msg string
	switch {
	case v.Override != "":
		msg = "Saved, but " + v.Override + " chooses the database (" + v.OverrideAddress + "); the saved address applies once it is unset."
	case v.NextStart != "":
		msg = "Saved. ducklm opens " + v.NextStart + " at its next start; until then this window keeps " + v.InUse + "."
	default:
		msg = "Saved. This is the database in use."
	}
	return DatabaseSaved{Database: v, Message: msg}, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
