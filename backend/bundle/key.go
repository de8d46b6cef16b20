package bundle

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"ducklm/backend"
)

// Key is an installation's signing key.
type Key struct {
	Private ed25519.PrivateKey
	Public  ed25519.PublicKey
}

// Fingerprint returns the key's fingerprint.
func (k Key) Fingerprint() string { return Fingerprint(k.Public) }

// KeyPath returns where the private key of data directory dir lives; the
// public key is beside it with ".pub".
func KeyPath(dir string) string { return filepath.Join(dir, "keys", "ed25519") }

// TrustedKeysPath returns the file that lists the fingerprints of signers
// dir trusts, one a line ("#" starts a comment).
func TrustedKeysPath(dir string) string { return filepath.Join(dir, "trusted_keys") }

// Fingerprint is the sha256 of a public key, in hex.
func Fingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:])
}

// FormatFingerprint shows a fingerprint in groups of four hex digits.
func FormatFingerprint(fp string) string {
	var b strings.Builder
	for i := 0; i < len(fp); i += 4 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(fp[i:min(i+4, len(fp))])
	}
	return b.String()
}

// LoadOrCreateKey returns the signing key of data directory dir, creating
// it (private key readable by the owner only) on first use.
func LoadOrCreateKey(dir string) (Key, error) {
	k, ok, err := LoadKey(dir)
	if err != nil || ok {
		return k, err
	}
	path := KeyPath(dir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return Key{}, backend.Wrap(err, backend.EUNAVAILABLE, "cannot create the key folder %s", filepath.Dir(path))
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return Key{}, backend.Wrap(err, backend.EINTERNAL, "cannot generate a signing key")
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return Key{}, backend.Wrap(err, backend.EINTERNAL, "cannot encode the signing key")
	}
	// Link, not rename: two processes creating the key at once must end up
	// with one key, not with the second overwriting the first.
	if err := writeNew(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		if errors.Is(err, fs.ErrExist) {
			k, _, err := LoadKey(dir)
			return k, err
		}
		return Key{}, backend.Wrap(err, backend.EUNAVAILABLE, "cannot write the signing key %s", path)
	}
	k = Key{Private: priv, Public: pub}
	if err := writePublic(path, pub); err != nil {
		return Key{}, err
	}
	return k, nil
}

// LoadKey returns the signing key of dir, and false when there is none yet.
func LoadKey(dir string) (Key, bool, error) {
	path := KeyPath(dir)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Key{}, false, nil
	}
	if err != nil {
		return Key{}, false, backend.Wrap(err, backend.EUNAVAILABLE, "cannot read the signing key %s", path)
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return Key{}, false, backend.Errorf(backend.ECORRUPT, "the signing key %s is damaged (not a PEM private key); move it away and a new one is made", path)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	priv, ok := parsed.(ed25519.PrivateKey)
	if err != nil || !ok {
		return Key{}, false, backend.Errorf(backend.ECORRUPT, "the signing key %s is damaged (not an ed25519 key); move it away and a new one is made", path)
	}
	k := Key{Private: priv, Public: priv.Public().(ed25519.PublicKey)}
	if _, err := os.Stat(path + ".pub"); errors.Is(err, fs.ErrNotExist) {
		if err := writePublic(path, k.Public); err != nil {
			return Key{}, false, err
		}
	}
	return k, true, nil
}

func writePublic(path string, pub ed25519.PublicKey) error {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot encode the public key")
	}
	err = writeNew(path+".pub", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot write the public key %s.pub", path)
	}
	return nil
}

// writeNew writes data to path durably, failing with fs.ErrExist when path
// exists.
func writeNew(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".key-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Link(tmp.Name(), path)
}

// Trust is the set of signers an installation knows.
type Trust struct {
	own  string
	keys map[string]bool
}

// trustMu serialises the read-modify-write of trusted_keys files within
// this process: without it, a TrustSigner and a ForgetSigner running at once
// would each rename their own rewrite into place and one change would be
// lost. (Readers need no lock: a rewrite replaces the file whole.)
var trustMu sync.Mutex

// TrustedSigner is one signer a trusted_keys file lists.
type TrustedSigner struct {
	// Fingerprint is 64 lowercase hex digits.
	Fingerprint string
	// Note is the comment beside the fingerprint on its line ("" for none).
	Note string
}

// notFingerprint is the error for fp when it is not a key fingerprint.
func notFingerprint(fp string) error {
	return backend.Errorf(backend.EINVALID, "%q is not a key fingerprint (64 hex digits, spaces and colons allowed)", fp)
}

// parseTrustLine reads one line of a trusted_keys file: its fingerprint
// ("" for a blank or comment-only line) and the comment beside it. ok is
// false when the line holds something that is not a fingerprint.
func parseTrustLine(text string) (fp, note string, ok bool) {
	line, comment, _ := strings.Cut(strings.TrimRight(text, "\r\n"), "#")
	note = strings.TrimSpace(comment)
	if strings.TrimSpace(line) == "" {
		return "", note, true
	}
	fp = NormalizeFingerprint(line)
	return fp, note, fp != ""
}

// readTrusted returns the signers listed in data directory dir's
// trusted_keys file, each once (at its first line, with the first note
// beside it), in file order; none when there is no file.
func readTrusted(dir string) ([]TrustedSigner, error) {
	path := TrustedKeysPath(dir)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot read %s", path)
	}
	defer f.Close()
	var out []TrustedSigner
	at := map[string]int{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fp, note, ok := parseTrustLine(sc.Text())
		if !ok {
			return nil, backend.Errorf(backend.EINVALID, "line %d of %s is not a key fingerprint (64 hex digits, spaces and colons allowed)", n, path)
		}
		if fp == "" {
			continue
		}
		if i, seen := at[fp]; seen {
			if out[i].Note == "" {
				out[i].Note = note
			}
			continue
		}
		at[fp] = len(out)
		out = append(out, TrustedSigner{Fingerprint: fp, Note: note})
	}
	if err := sc.Err(); err != nil {
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot read %s", path)
	}
	return out, nil
}

// LoadTrust reads the signers data directory dir trusts: its own key
// (always) and the fingerprints listed in its trusted_keys file.
func LoadTrust(dir string) (Trust, error) {
	t := Trust{keys: map[string]bool{}}
	k, ok, err := LoadKey(dir)
	if err != nil {
		return t, err
	}
	if ok {
		t.own = k.Fingerprint()
	}
	listed, err := readTrusted(dir)
	if err != nil {
		return t, err
	}
	for _, s := range listed {
		t.keys[s.Fingerprint] = true
	}
	return t, nil
}

// TrustedSigners returns the signers data directory dir's trusted_keys file
// lists, in file order, each with the comment beside it. Its own key is not
// among them unless the file lists it too: it is trusted regardless.
func TrustedSigners(dir string) ([]TrustedSigner, error) {
	listed, err := readTrusted(dir)
	if err != nil {
		return nil, err
	}
	if listed == nil {
		listed = []TrustedSigner{}
	}
	return listed, nil
}

// NormalizeFingerprint returns fp as 64 lowercase hex digits without
// separators, or "" when it is not a fingerprint.
func NormalizeFingerprint(fp string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(fp) {
		switch {
		case c == ' ' || c == ':' || c == '\t':
		case c >= '0' && c <= '9' || c >= 'a' && c <= 'f':
			b.WriteRune(c)
		default:
			return ""
		}
	}
	if b.Len() != 64 {
		return ""
	}
	return b.String()
}

// Known reports whether the signer fp is trusted, and why.
func (t Trust) Known(fp string) (bool, string) {
	switch {
	case fp == "":
		return false, "unsigned"
	case fp == t.own:
		return true, "this installation's own key"
	case t.keys[fp]:
		return true, "listed in trusted_keys"
	}
	return false, "unknown signer"
}

// TrustSigner adds the signer fp to data directory dir's trusted_keys file,
// with note as its comment, and reports whether it was added (false: listed
// already). The file is rewritten whole through a temporary file, so a crash
// leaves the old list or the new one.
func TrustSigner(dir, fp, note string) (bool, error) {
	norm := NormalizeFingerprint(fp)
	if norm == "" {
		return false, notFingerprint(fp)
	}
	trustMu.Lock()
	defer trustMu.Unlock()
	trust, err := LoadTrust(dir)
	if err != nil {
		return false, err
	}
	if known, _ := trust.Known(norm); known {
		return false, nil
	}
	path := TrustedKeysPath(dir)
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, backend.Wrap(err, backend.EUNAVAILABLE, "cannot read %s", path)
	}
	var b strings.Builder
	b.Write(old)
	if len(old) > 0 && old[len(old)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString(FormatFingerprint(norm))
	if note = strings.Join(strings.Fields(note), " "); note != "" {
		b.WriteString("  # " + note)
	}
	b.WriteByte('\n')
	if err := replaceTrusted(dir, []byte(b.String())); err != nil {
		return false, err
	}
	return true, nil
}

// ForgetSigner removes the signer fp from data directory dir's trusted_keys
// file, and reports whether it was listed. Every line that lists it goes;
// every other line, comments and blank lines included, stays byte for byte.
// Like TrustSigner it rewrites the file whole through a temporary file.
// This installation's own key stays trusted whatever the file says.
func ForgetSigner(dir, fp string) (bool, error) {
	norm := NormalizeFingerprint(fp)
	if norm == "" {
		return false, notFingerprint(fp)
	}
	trustMu.Lock()
	defer trustMu.Unlock()
	path := TrustedKeysPath(dir)
	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, backend.Wrap(err, backend.EUNAVAILABLE, "cannot read %s", path)
	}
	kept := make([]byte, 0, len(old))
	found := false
	for rest := old; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		rest = rest[len(line):]
		if lfp, _, _ := parseTrustLine(string(line)); lfp == norm {
			found = true
			continue
		}
		kept = append(kept, line...)
	}
	if !found {
		return false, nil
	}
	if err := replaceTrusted(dir, kept); err != nil {
		return false, err
	}
	return true, nil
}

// replaceTrusted makes data the whole of dir's trusted_keys file, durably
// and atomically: written to a temporary file beside it (with the old
// file's mode, owner-only for a new one), then renamed over it.
func replaceTrusted(dir string, data []byte) error {
	path := TrustedKeysPath(dir)
	mode := os.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(dir, ".trusted_keys-*")
	if err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot write %s", path)
	}
	defer os.Remove(tmp.Name())
	err = tmp.Chmod(mode)
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot write %s", path)
	}
	return nil
}
