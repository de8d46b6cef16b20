package service

import (
	"context"

	"ducklm/backend/bundle"
	"ducklm/backend/store"
)

// Bundles is this data directory as bundles see it.
func (s *Service) Bundles() bundle.Local {
	return bundle.Local{Store: store.NewWorlds(s.DB, s.Ledger), Events: s.Ledger, Blobs: s.Blobs,
		Programs: s.Worlds.Runner(), WorldLimits: s.Worlds.Limits()}
}

// VerifyBundle checks the bundle file at path completely, against the
// signers this installation trusts, writing nothing.
func (s *Service) VerifyBundle(ctx context.Context, path string, progress func(bundle.Progress)) (bundle.Report, error) {
	trust, err := bundle.LoadTrust(s.Dir)
	if err != nil {
		return bundle.Report{}, err
	}
	return bundle.VerifyFile(ctx, s.Bundles(), path, bundle.VerifyOptions{Trust: trust, Progress: progress})
}

// ImportBundle verifies the bundle file at path and writes all of it, or
// nothing; allowUnsigned accepts a sound bundle whose signer this
// installation does not trust.
func (s *Service) ImportBundle(ctx context.Context, path string, allowUnsigned bool, progress func(bundle.Progress)) (bundle.Result, error) {
	trust, err := bundle.LoadTrust(s.Dir)
	if err != nil {
		return bundle.Result{}, err
	}
	return bundle.ImportFile(ctx, s.Bundles(), s.Ledger, path, bundle.ImportOptions{
		VerifyOptions: bundle.VerifyOptions{Trust: trust, Progress: progress}, AllowUnsigned: allowUnsigned})
}
