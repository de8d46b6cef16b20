package service

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"ducklm/backend"
	"ducklm/backend/runtime"
)

// installationPath is the file that names a data directory's installation.
func installationPath(dir string) string { return filepath.Join(dir, "installation") }

// Installation returns the data directory's installation: its id, made once
// when the directory is first opened and kept in <dir>/installation, and
// the host's name for people (the current one; the one recorded when the
// host has none). On a team's database the id says which installation
// drives a run (docs/team-server.md, "Who drives a task run").
func Installation(dir string) (runtime.Installation, error) {
	path := installationPath(dir)
	var inst runtime.Installation
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if json.Unmarshal(data, &inst) != nil || !strings.HasPrefix(inst.ID, "inst_") {
			return inst, backend.Errorf(backend.ECORRUPT, "%s is damaged; move it away and ducklm makes a new one (this data directory's runs on a team's database then wait for a person to resume them)", path)
		}
	case errors.Is(err, os.ErrNotExist):
		if inst, err = newInstallation(path); err != nil {
			return inst, err
		}
	default:
		return inst, backend.Wrap(err, backend.EUNAVAILABLE, "cannot read %s", path)
	}
	if host, err := os.Hostname(); err == nil && host != "" {
		inst.Host = host
	}
	return inst, nil
}

// newInstallation writes a new installation file, or reads the one another
// process wrote first.
func newInstallation(path string) (runtime.Installation, error) {
	var raw [13]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return runtime.Installation{}, backend.Wrap(err, backend.EINTERNAL, "cannot make an installation id")
	}
	inst := runtime.Installation{ID: "inst_" + hex.EncodeToString(raw[:])}
	inst.Host, _ = os.Hostname()
	data, _ := json.Marshal(inst)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return inst, backend.Wrap(err, backend.EUNAVAILABLE, "cannot create the data directory %s", filepath.Dir(path))
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".installation-*")
	if err != nil {
		return inst, backend.Wrap(err, backend.EUNAVAILABLE, "cannot write %s", path)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(append(data, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return inst, backend.Wrap(err, backend.EUNAVAILABLE, "cannot write %s", path)
	}
	// A link fails when the file exists: the first writer's id is the one.
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			data, rerr := os.ReadFile(path)
			if rerr == nil && json.Unmarshal(data, &inst) == nil {
				return inst, nil
			}
		}
		return inst, backend.Wrap(err, backend.EUNAVAILABLE, "cannot write %s", path)
	}
	return inst, nil
}
