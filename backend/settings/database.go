package settings

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"ducklm/backend"
)

// databaseFile holds the database address the window's Settings chose. It
// is kept apart from settings.json because the address may carry a
// password: the file is the user's alone (0600), as the signing key is,
// and nothing ever sends its password back to a screen.
const databaseFile = "database-url"

// LoadDatabase returns the database address stored in data directory dir,
// password included; "" means this machine's SQLite database.
func LoadDatabase(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, databaseFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", backend.Wrap(err, backend.EUNAVAILABLE, "cannot read the database setting in %s", dir)
	}
	return strings.TrimSpace(string(data)), nil
}

// SaveDatabase stores the database address (a postgres:// URL, password
// included) for the next start; "" goes back to this machine's SQLite
// database. The caller checks the address.
func SaveDatabase(dir, url string) error {
	path := filepath.Join(dir, databaseFile)
	url = strings.TrimSpace(url)
	if url == "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return backend.Wrap(err, backend.EUNAVAILABLE, "cannot remove the database setting in %s", dir)
		}
		return nil
	}
	// replaceFile's temporary file is created 0600, and the rename keeps it.
	if err := replaceFile(dir, databaseFile, []byte(url+"\n")); err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot write the database setting in %s", dir)
	}
	return nil
}
