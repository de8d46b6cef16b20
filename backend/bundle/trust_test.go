package bundle_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bundle"
)

// fps returns n distinct fingerprints, from seed on.
func fps(seed, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%064x", seed+i)
	}
	return out
}

func writeTrusted(t *testing.T, dir, text string, mode os.FileMode) {
	t.Helper()
	require.NoError(t, os.WriteFile(bundle.TrustedKeysPath(dir), []byte(text), mode))
	require.NoError(t, os.Chmod(bundle.TrustedKeysPath(dir), mode))
}

func readTrusted(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(bundle.TrustedKeysPath(dir))
	require.NoError(t, err)
	return string(b)
}

func TestTrustedSignersListsTheFileInOrderWithNotes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b, c := strings.Repeat("ab", 32), strings.Repeat("cd", 32), strings.Repeat("ef", 32)

	list, err := bundle.TrustedSigners(dir)
	require.NoError(t, err, "no file is no signers")
	require.NotNil(t, list)
	require.Empty(t, list)

	writeTrusted(t, dir, "# colleagues\n\n"+
		bundle.FormatFingerprint(c)+"  # ada's laptop\r\n"+
		strings.ToUpper(a)+"\n"+
		"   # an indented comment\n"+
		b[:32]+":"+b[32:]+" #  grid.ducklm # from the team  \n"+
		c+" # listed twice\n", 0o600)
	list, err = bundle.TrustedSigners(dir)
	require.NoError(t, err)
	require.Equal(t, []bundle.TrustedSigner{
		{Fingerprint: c, Note: "ada's laptop"},
		{Fingerprint: a, Note: ""},
		{Fingerprint: b, Note: "grid.ducklm # from the team"},
	}, list, "each signer once, where it first appears, with the comment beside it")

	// What TrustSigner writes lists back with its note.
	d := strings.Repeat("12", 32)
	_, err = bundle.TrustSigner(dir, d, "trusted from the window for grid.ducklm")
	require.NoError(t, err)
	list, err = bundle.TrustedSigners(dir)
	require.NoError(t, err)
	require.Equal(t, bundle.TrustedSigner{Fingerprint: d, Note: "trusted from the window for grid.ducklm"}, list[len(list)-1])
}

func TestTrustedSignersRefusesADamagedFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTrusted(t, dir, strings.Repeat("ab", 32)+"\nnot a key # oops\n", 0o600)
	_, err := bundle.TrustedSigners(dir)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	require.ErrorContains(t, err, "line 2 of "+bundle.TrustedKeysPath(dir)+" is not a key fingerprint")
}

func TestForgetSignerRemovesItsLinesAndKeepsEveryOther(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	before := "# colleagues: keep this comment\r\n" +
		"\n" +
		bundle.FormatFingerprint(a) + "  # ada\n" +
		"  # indented, with trailing spaces   \n" +
		strings.ToUpper(b) + "\t# bob\n" +
		a + "\n" +
		"# the end, no newline"
	writeTrusted(t, dir, before, 0o640)

	forgot, err := bundle.ForgetSigner(dir, strings.ToUpper(bundle.FormatFingerprint(a)))
	require.NoError(t, err)
	require.True(t, forgot)
	require.Equal(t, "# colleagues: keep this comment\r\n"+
		"\n"+
		"  # indented, with trailing spaces   \n"+
		strings.ToUpper(b)+"\t# bob\n"+
		"# the end, no newline", readTrusted(t, dir), "both of a's lines go; the rest stays byte for byte")
	st, err := os.Stat(bundle.TrustedKeysPath(dir))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), st.Mode().Perm(), "the file keeps its mode")

	trust, err := bundle.LoadTrust(dir)
	require.NoError(t, err)
	known, _ := trust.Known(a)
	require.False(t, known, "a forgotten signer is unknown")
	known, _ = trust.Known(b)
	require.True(t, known)

	// The last line, without its newline, can go too.
	forgot, err = bundle.ForgetSigner(dir, b)
	require.NoError(t, err)
	require.True(t, forgot)
	writeTrusted(t, dir, "# x\n"+a, 0o600)
	forgot, err = bundle.ForgetSigner(dir, a)
	require.NoError(t, err)
	require.True(t, forgot)
	require.Equal(t, "# x\n", readTrusted(t, dir))

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind: %v", entries)
}

func TestForgetSignerOfAnUnknownSignerChangesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	forgot, err := bundle.ForgetSigner(dir, strings.Repeat("ab", 32))
	require.NoError(t, err)
	require.False(t, forgot, "no file")
	_, err = os.Stat(bundle.TrustedKeysPath(dir))
	require.ErrorIs(t, err, os.ErrNotExist, "forgetting does not create the file")

	text := "# only " + strings.Repeat("ab", 32) + " in a comment\n" + strings.Repeat("cd", 32) + "\n"
	writeTrusted(t, dir, text, 0o600)
	forgot, err = bundle.ForgetSigner(dir, strings.Repeat("ab", 32))
	require.NoError(t, err)
	require.False(t, forgot, "a fingerprint in a comment is not listed")
	require.Equal(t, text, readTrusted(t, dir))
}

func TestForgetSignerRefusesWhatIsNotAFingerprint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	text := strings.Repeat("ab", 32) + "\n"
	writeTrusted(t, dir, text, 0o600)
	for _, fp := range []string{"", "not a key", strings.Repeat("ab", 31), strings.Repeat("ab", 32) + "# note", strings.Repeat("zz", 32)} {
		forgot, err := bundle.ForgetSigner(dir, fp)
		require.False(t, forgot, fp)
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err), fp)
		require.ErrorContains(t, err, "is not a key fingerprint (64 hex digits, spaces and colons allowed)", fp)
	}
	require.Equal(t, text, readTrusted(t, dir))
}

func TestTrustAndForgetAtOnceLoseNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old, added := fps(1, 40), fps(1000, 40)
	var text strings.Builder
	text.WriteString("# kept\n")
	for _, fp := range old {
		text.WriteString(fp + "\n")
	}
	writeTrusted(t, dir, text.String(), 0o600)

	var wg sync.WaitGroup
	errs := make(chan error, len(old)+len(added))
	for i := range old {
		wg.Add(2)
		go func() {
			defer wg.Done()
			forgot, err := bundle.ForgetSigner(dir, old[i])
			if err == nil && !forgot {
				err = fmt.Errorf("%s was not forgotten", old[i])
			}
			errs <- err
		}()
		go func() {
			defer wg.Done()
			ok, err := bundle.TrustSigner(dir, added[i], fmt.Sprintf("n%d", i))
			if err == nil && !ok {
				err = fmt.Errorf("%s was not added", added[i])
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	list, err := bundle.TrustedSigners(dir)
	require.NoError(t, err)
	got := map[string]string{}
	for _, s := range list {
		got[s.Fingerprint] = s.Note
	}
	require.Len(t, got, len(added), "exactly the added signers are left")
	for i, fp := range added {
		require.Equal(t, fmt.Sprintf("n%d", i), got[fp], fp)
	}
	require.True(t, strings.HasPrefix(readTrusted(t, dir), "# kept\n"))
}
