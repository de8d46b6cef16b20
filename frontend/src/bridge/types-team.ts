// The team's database and workers (Go: api.DatabaseView and friends, api.WorkerList).
// Part of the bridge's types: see types.ts for how they are written.
import type { BundleCounts, ImportResult } from './types-bundles';

/** DatabaseView is the Settings screen's Database field (Go: api.DatabaseView); no field carries a password. */
export interface DatabaseView {
  /** The stored address without its password; "" is this machine's SQLite database. */
  address: string;
  /** The stored address has a password (never sent back). */
  passwordStored: boolean;
  /** The database this process opened: a PostgreSQL address without its password, or the SQLite file. */
  inUse: string;
  /** The database in use is a team's PostgreSQL. */
  shared: boolean;
  /** "DUCKLM_DATABASE_URL" when that variable (or --database-url) chooses the database; "" otherwise. */
  override: string;
  /** The variable's address, without its password. */
  overrideAddress: string;
  /** What the next start opens, when that differs from what is in use; "" otherwise. */
  nextStart: string;
  /** On a team's database, this machine's own database, which ducklm leaves as it was; null on the local database. */
  local: LocalDataView | null;
  /** "Restart now" can start ducklm again (the desktop window); in a browser the person restarts `ducklm serve`. */
  canRestart: boolean;
}

/** LocalDataView is this machine's own database seen from a team's installation (Go: api.LocalDataView). */
export interface LocalDataView {
  /** The SQLite file in the data directory. */
  path: string;
  exists: boolean;
  /** Counted as the Runs list and the Worlds screen count. */
  taskRuns: number;
  simulatedWorlds: number;
  /** How many lineages (a root world with its forks) a copy brings over. */
  roots: number;
  /** Task runs that have not ended: they are not copied until they finish. */
  unfinished: number;
  /** Why it cannot be read; "" when it can. */
  problem: string;
}

/** CopiedLineage is one local lineage brought to the team's database (Go: api.CopiedLineage). */
export interface CopiedLineage {
  root: string;
  name: string;
  domain: string;
  /** What importing its bundle did (the Import bundle report). */
  import: ImportResult;
  /** Why it was not copied; "" when its import ran. */
  problem: string;
}

/** LocalCopy is what copying the local runs and worlds did (Go: api.LocalCopy). */
export interface LocalCopy {
  lineages: CopiedLineage[];
  added: BundleCounts;
  message: string;
}

/** DatabaseInput is what the field sends (Go: api.DatabaseInput); an empty password keeps the stored one. */
export interface DatabaseInput {
  address: string;
  password: string;
}

/** DatabaseTest is the answer of "Test connection" (Go: api.DatabaseTest). */
export interface DatabaseTest {
  ok: boolean;
  /** One sentence: reachable with the server's version and schema, or why not. */
  message: string;
  serverVersion: string;
  schemaVersion: number;
  latestSchemaVersion: number;
}

/** DatabaseSaved is what saving the field did (Go: api.DatabaseSaved). */
export interface DatabaseSaved {
  database: DatabaseView;
  /** When the choice takes effect. */
  message: string;
}

/** WorkerState is a worker's state as its row says (Go: backend.WorkerState). */
export type WorkerState = 'working' | 'idle' | 'stopped' | 'lost';

/** WorkerJob is a job a worker runs now (Go: backend.WorkerJob). */
export interface WorkerJob {
  /** The job's id in the work queue (River's river_job.id). */
  id: number;
  /** "branches" (deliberation branches); later "world_run", "task_step". */
  kind: string;
  /** The run the job serves: a deliberation's parent run, a world run, a task run. */
  runId: string;
  /** What it does in a few words ("8 branches of round 2"). */
  label: string;
  startedAt: string;
}

/** Worker is one `ducklm worker` process as the team's database last heard of it (Go: backend.Worker). */
export interface Worker {
  /** host-pid-random; River's tables use the same id. */
  id: string;
  host: string;
  pid: number;
  /** How many jobs it runs at once. */
  slots: number;
  version: string;
  startedAt: string;
  /** When it last said it was alive. */
  heartbeatAt: string;
  /** When it left cleanly; Go's zero time while it works or after it died. */
  stoppedAt: string;
  state: WorkerState;
  /** Jobs under way, oldest first. */
  jobs: WorkerJob[];
  /** Jobs it finished since it started. */
  done: number;
}

/** WorkersView is the Workers screen's data (Go: api.WorkersView). */
export interface WorkersView {
  /** false on this machine's SQLite database: workers serve a team's PostgreSQL only. */
  shared: boolean;
  /** Most recent heartbeat first; stopped and lost ones of the last day included. */
  workers: Worker[];
  /** How often a worker writes its heartbeat, and how long a silent one takes to be lost. */
  heartbeatMs: number;
  lostAfterMs: number;
  /** The time the states were derived at, on the server's clock. */
  now: string;
}
