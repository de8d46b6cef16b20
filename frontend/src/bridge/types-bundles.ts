// Bundles (Go: api, bundle).
// Part of the bridge's types: see types.ts for how they are written.
import type { Domain, RunStatus } from './types-core';

/** BundleScope is what an export holds beside its root (Go: api.Scope*). */
export type BundleScope = 'alone' | 'ancestry' | 'descendants' | 'all';

/** ExportInput is the export dialog's form (Go: api.ExportInput). */
export interface ExportInput {
  /** A run or world id. */
  root: string;
  scope: BundleScope;
  /** A full path on the machine ducklm runs on ("~/" is the home folder). */
  path: string;
  /** Replace an existing file (the native save dialog asked already). */
  replace: boolean;
  /** The id progress is reported under; "" for none. */
  op: string;
}

/** BundleCounts are the sizes of a bundle or of what an import added (Go: bundle.Counts). */
export interface BundleCounts {
  worlds: number;
  runs: number;
  forks: number;
  checkpoints: number;
  streams: number;
  events: number;
  blobs: number;
}

/** ExportResult is a bundle written to a file (Go: api.ExportResult). */
export interface ExportResult {
  file: string;
  bytes: number;
  /** The signer's fingerprint (64 hex digits); "" when unsigned. */
  signer: string;
  root: string;
  scope: BundleScope;
  counts: BundleCounts;
}

/** BundleChecks are the steps of verifying a bundle, true once passed (Go: bundle.Checks). */
export interface BundleChecks {
  manifest: boolean;
  /** True for an unsigned bundle too: it has no signature to fail (see signed). */
  signature: boolean;
  entries: boolean;
  references: boolean;
}

/** HeldRun is a run a bundle holds (Go: bundle.HeldRun). */
export interface HeldRun {
  id: string;
  status: RunStatus;
  events: number;
}

/** HeldWorld is a world a bundle holds, with its runs (Go: bundle.HeldWorld). */
export interface HeldWorld {
  id: string;
  name: string;
  domain: Domain;
  parentWorldId?: string;
  runs: HeldRun[];
}

/** BundleReport is what verifying a bundle file found (Go: api.BundleReport). */
export interface BundleReport {
  file: string;
  bytes: number;
  ok: boolean;
  /** The first problem, as a sentence. */
  problem?: string;
  checks: BundleChecks;
  formatVersion: number;
  appVersion: string;
  createdAt?: string;
  roots: string[];
  scope: { ancestry: boolean; descendants: boolean };
  /** Entries the manifest lists with their sha256. */
  entries: number;
  signed: boolean;
  signer?: string;
  trusted: boolean;
  /** Why the signer is trusted or not ("this installation's own key", "unknown signer", "unsigned"…). */
  trust: string;
  counts: BundleCounts;
  worlds: HeldWorld[];
}

/** ImportInput is the import dialog's choice (Go: api.ImportInput). */
export interface ImportInput {
  path: string;
  /** Import a bundle that is unsigned or whose signer is unknown here: the user's decision. */
  allowUnsigned: boolean;
  op: string;
}

/** ImportResult is what an import did: everything or nothing (Go: api.ImportResult). */
export interface ImportResult {
  report: BundleReport;
  imported: boolean;
  /** Why nothing was written: the signer is not trusted, or the bundle is bad. */
  refused?: 'untrusted' | 'invalid';
  problem?: string;
  added: BundleCounts;
  updated: number;
  alreadyPresent: boolean;
  /** The worlds and runs that are new here. */
  addedIds: string[];
}

/** TrustedSigner is a signer this installation trusts (Go: api.TrustedSigner). */
export interface TrustedSigner {
  /** 64 hex digits. */
  fingerprint: string;
  /** The same in groups of four, for people. */
  formatted: string;
  /** The comment beside it in trusted_keys; "" for none. */
  note: string;
}

/** TrustedSigners is who this installation trusts and who it signs as (Go: api.TrustedSigners). */
export interface TrustedSigners {
  /** The fingerprint this installation's bundles are signed with, in groups of four. */
  own: string;
  /** The same as 64 hex digits. */
  ownFingerprint: string;
  /** The signers listed in file, in its order. */
  signers: TrustedSigner[];
  /** The trusted_keys file. */
  file: string;
}
