// The ledger, the machine checks, and worlds, runs, checkpoints and forks (Go: backend).
// Part of the bridge's types: see types.ts for how they are written.

/** Reality says what kind of fact an event records. */
export type Reality = 'external_real' | 'world_local';

/** LedgerEvent is one committed event envelope (Go: backend.Event). */
export interface LedgerEvent {
  id: string;
  /** The world run the event belongs to. */
  stream: string;
  /** Monotonic, gap-free position within the stream. */
  seq: number;
  /** Global position across all streams, assigned at commit. */
  pos: number;
  type: string;
  schemaVersion: number;
  /** An arbitrary JSON value. */
  payload: unknown;
  reality: Reality;
  causationId?: string;
  correlationId?: string;
  /** RFC 3339 wall time with microseconds. */
  recordedAt: string;
  parentTime: number;
  deliberationIndex: number;
  worldLocalTime: number;
}

/** Counts of what the ledger and the registries hold. */
export interface Counts {
  /** Every world, a task run's own real world included. */
  worlds: number;
  /** Every run, of task runs and simulated worlds. */
  runs: number;
  /** The runs the Runs list shows. */
  taskRuns: number;
  /** The worlds the Worlds screen shows. */
  simulatedWorlds: number;
  /** The simulated worlds of deliberation branches, which the Worlds screen leaves out (the lineage draws them under their rounds). */
  deliberationBranches?: number;
  streams: number;
  events: number;
}

/** Overview is what the first screen shows (Go: service.Overview). */
export interface Overview {
  version: string;
  dataDir: string;
  databasePath: string;
  schemaVersion: number;
  latestSchemaVersion: number;
  counts: Counts;
  /** Newest first. */
  recentEvents: LedgerEvent[];
}

/** CheckStatus: ok, warn (ducklm works, with less) or fail (it cannot work until fixed). */
export type CheckStatus = 'ok' | 'warn' | 'fail';

/** Check is one result of the doctor's machine checks (Go: doctor.Check). */
export interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
  fix?: string;
}

/** BlobRef names content in the blob store (Go: backend.BlobRef). */
export interface BlobRef {
  digest: string;
  size: number;
  mediaType: string;
}

export type Domain = 'real' | 'simulated';

/** WorldSpec is an immutable world description (Go: backend.WorldSpec). */
export interface WorldSpec {
  id: string;
  name: string;
  domain: Domain;
  /** "starlark" for simulated worlds, "task" for task runs. */
  backend: string;
  program: BlobRef;
  initialState?: BlobRef;
  params: unknown;
  seed: number;
  parentWorldId?: string;
  forkId?: string;
  createdAt: string;
}

export type RunStatus = 'pending' | 'running' | 'paused' | 'awaiting_approval' | 'completed' | 'failed' | 'terminated';

/** WorldRun is one run of a world (Go: backend.WorldRun). */
export interface WorldRun {
  id: string;
  worldId: string;
  status: RunStatus;
  worldLocalTime: number;
  parentTime: number;
  deliberationIndex: number;
  baseRunId?: string;
  baseSeq: number;
  latestCheckpointId?: string;
  error?: string;
  createdAt: string;
  updatedAt: string;
}

/** Checkpoint is an exact snapshot record (Go: backend.Checkpoint). */
export interface Checkpoint {
  id: string;
  worldId: string;
  runId: string;
  worldLocalTime: number;
  /** The run's stream seq the snapshot covers (inclusive). */
  ledgerSeq: number;
  blob: BlobRef;
  createdAt: string;
}

export type DivergenceType =
  | 'state_patch'
  | 'action_override'
  | 'seed_change'
  | 'program_change'
  | 'parameter_change'
  | 'plan_edit';

export type SeedPolicy = 'inherit' | 'derive' | 'fresh';

/** Fork is one edge of the lineage DAG (Go: backend.Fork). */
export interface Fork {
  id: string;
  parentWorldId: string;
  parentRunId: string;
  checkpointId: string;
  childWorldId: string;
  divergence: DivergenceType;
  /** The delta as a decoded JSON value. */
  delta: unknown;
  seedPolicy: SeedPolicy;
  createdAt: string;
}
