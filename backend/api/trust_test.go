package api_test

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/api"
	"ducklm/backend/bundle"
)

func TestTrustedSignersListsAndForgets(t *testing.T) {
	a, svc := setupSvc(t)
	colleague := strings.Repeat("ab", 32)

	list, err := a.TrustedSigners()
	require.NoError(t, err)
	require.NotNil(t, list.Signers, "lists are never null")
	require.Empty(t, list.Signers)
	require.Equal(t, bundle.TrustedKeysPath(svc.Dir), list.File)
	key, ok, err := bundle.LoadKey(svc.Dir)
	require.NoError(t, err)
	require.True(t, ok, "the key exists once its fingerprint was shown, so it can be given out before a first export")
	require.Equal(t, key.Fingerprint(), list.OwnFingerprint)
	require.Equal(t, bundle.FormatFingerprint(key.Fingerprint()), list.Own)

	added, err := a.TrustSigner(bundle.FormatFingerprint(colleague), "/home/ada/grid.ducklm")
	require.NoError(t, err)
	require.True(t, added)
	list, err = a.TrustedSigners()
	require.NoError(t, err)
	require.Equal(t, []api.TrustedSigner{{Fingerprint: colleague, Formatted: bundle.FormatFingerprint(colleague),
		Note: "trusted from the window for grid.ducklm"}}, list.Signers)

	forgot, err := a.ForgetSigner(list.Signers[0].Formatted)
	require.NoError(t, err)
	require.True(t, forgot)
	list, err = a.TrustedSigners()
	require.NoError(t, err)
	require.Empty(t, list.Signers)
	trust, err := bundle.LoadTrust(svc.Dir)
	require.NoError(t, err)
	known, _ := trust.Known(colleague)
	require.False(t, known, "its bundles ask again")

	forgot, err = a.ForgetSigner(colleague)
	require.NoError(t, err)
	require.False(t, forgot, "forgetting twice is not a failure")

	_, err = a.ForgetSigner("ada's key")
	require.EqualError(t, err, `"ada's key" is not a key fingerprint (64 hex digits, spaces and colons allowed)`)
	var wrapped interface{ Unwrap() error }
	require.False(t, errors.As(err, &wrapped), "a plain sentence")
}

func TestTrustedSignersSaysWhichLineIsDamaged(t *testing.T) {
	a, svc := setupSvc(t)
	require.NoError(t, os.WriteFile(bundle.TrustedKeysPath(svc.Dir), []byte("# colleagues\nnot a key\n"), 0o600))
	_, err := a.TrustedSigners()
	require.EqualError(t, err, "line 2 of "+bundle.TrustedKeysPath(svc.Dir)+" is not a key fingerprint (64 hex digits, spaces and colons allowed)")
}

func TestTrustedSignersWithoutADataDirectory(t *testing.T) {
	a := api.New(nil, backend.Errorf(backend.ECONFLICT, "the data directory is in use"), slog.New(slog.NewTextHandler(io.Discard, nil)))
	_, err := a.TrustedSigners()
	require.EqualError(t, err, "the data directory is in use")
	_, err = a.ForgetSigner(strings.Repeat("ab", 32))
	require.EqualError(t, err, "the data directory is in use")
}
