// Simulated worlds, lineage, history and comparison (Go: api, world).
// Part of the bridge's types: see types.ts for how they are written.
import type {
  Checkpoint,
  DivergenceType,
  Domain,
  Fork,
  LedgerEvent,
  Reality,
  RunStatus,
  SeedPolicy,
  WorldRun,
  WorldSpec,
} from './types-core';

/** LineageNode is a world in the fork DAG (Go: world.Node). */
export interface LineageNode {
  world: WorldSpec;
  latestRun?: WorldRun;
  runs: number;
}

/** LineageEdge is a fork (Go: world.Edge). */
export interface LineageEdge {
  fork: Fork;
  /** The parent's world-local time at the fork. */
  at: number;
}

export interface Lineage {
  nodes: LineageNode[];
  edges: LineageEdge[];
}

/** OutlineWorld is a world as a drawing of the lineage needs it (Go: world.OutlineWorld). */
export interface OutlineWorld {
  id: string;
  name: string;
  domain: Domain;
  parent?: string;
  createdAt: string;
  runs: number;
  /** The latest run and its status; absent for a world without runs. */
  runId?: string;
  status?: RunStatus;
  /** The latest run's deliberation index: a branch of that round of a search; absent for any other world. */
  round?: number;
  /** A batch of steps is being computed for the latest run (a running simulated run without it is idle). */
  stepping?: boolean;
}

/** OutlineFork is a fork as a drawing of the lineage needs it (Go: world.OutlineFork). */
export interface OutlineFork {
  id: string;
  from: string;
  to: string;
  divergence: DivergenceType;
  at: number;
  /** What the fork changed, in brief: its delta as compact JSON (cut at 60 bytes); absent when empty. */
  change?: string;
  /** The seed policy when it is not inherit. */
  seed?: SeedPolicy;
}

/** LineageOutline is the whole fork DAG with only what draws it (Go: world.Outline). */
export interface LineageOutline {
  worlds: OutlineWorld[];
  forks: OutlineFork[];
}

/** WorldQuery selects a page of worlds, newest first (Go: backend.WorldQuery). */
export interface WorldQuery {
  domain?: Domain;
  /** Only the worlds forked directly from this world. */
  parent?: string;
  /** Name contains it (any case), or the id contains it; "wld_…tail" matches a shortened id. */
  text?: string;
  /** Leave out deliberation branches (a run of theirs serves a round); the page counts them in `branches`. */
  withoutBranches?: boolean;
  /** The Next of the page before. */
  after?: string;
  /** 1–500; 100 when left out. */
  limit?: number;
}

/** WorldListItem is a world as a list shows it (Go: backend.WorldSummary). */
export interface WorldListItem {
  id: string;
  name: string;
  domain: Domain;
  parent?: string;
  createdAt: string;
  runs: number;
  /** Worlds forked directly from this one; `branches` of them are deliberation branches. */
  forks: number;
  branches?: number;
  /**
   * deliberationIndex: the round a deliberation branch's run serves; absent for other runs.
   * stepping: a batch of steps is being computed for the run (a running simulated run without it is idle).
   */
  latestRun?: { id: string; status: RunStatus; worldLocalTime: number; deliberationIndex?: number; stepping?: boolean };
  /** How a forked world left its parent: divergence and the parent's world time. */
  fork?: { id: string; divergence: DivergenceType; at: number };
}

/** WorldPage is one page of a world list (Go: backend.WorldPage). */
export interface WorldPage {
  worlds: WorldListItem[];
  /** Every world the query selects, on all pages. */
  total: number;
  /** The deliberation branches the query matched but left out (withoutBranches), on all pages. */
  branches?: number;
  /** Pass as `after` for the next page; absent on the last. */
  next?: string;
}

/** Example is a world program shipped with ducklm (Go: api.Example). */
export interface Example {
  name: string;
  source: string;
}

/** WorldInput creates a simulated world (Go: api.WorldInput). */
export interface WorldInput {
  name: string;
  /** Starlark source; "" with example set uses the example. */
  program: string;
  example: string;
  seed: number;
}

/** Created is a new world and its first run (Go: api.Created). */
export interface Created {
  world: WorldSpec;
  run: WorldRun;
}

/** StepInput drives a world run (Go: api.StepInput). */
export interface StepInput {
  runId: string;
  /** JSON text; "" or "null" lets the program choose. */
  action: string;
  steps: number;
  checkpointEvery: number;
  /** True queues the steps as one job for the team's workers (PostgreSQL, a worker alive). */
  onWorkers?: boolean;
  /** The id the job's progress is reported under (done and total count steps) and cancelWorldRun stops it by. */
  op?: string;
}

/** StepOutcome is a world run after steps (Go: world.StepOutcome). */
export interface StepOutcome {
  run: WorldRun;
  state: unknown;
  emitted: unknown[];
  done: boolean;
}

/** WorldDetail is what the worlds screen shows of one run (Go: api.WorldDetail). */
export interface WorldDetail {
  world: WorldSpec;
  run: WorldRun;
  runs: WorldRun[];
  fork?: Fork;
  checkpoints: Checkpoint[];
  state?: unknown;
  program?: string;
  /** What every call of a simulated world's program runs under (Go: starlark.Limits). */
  limits?: WorldLimits;
  /** A batch of steps is being computed for the run: a running simulated run without it is idle, waiting for its next action. */
  stepping?: boolean;
}

/** WorldLimits bound each call of a world program (Go: starlark.Limits). */
export interface WorldLimits {
  maxSteps: number;
  maxStateBytes: number;
  /** The setting worldMemoryMiB, in bytes. */
  maxMemoryBytes: number;
}

/** ForkInput is the delta editor's form (Go: api.ForkInput). */
export interface ForkInput {
  checkpointId: string;
  parentRunId: string;
  divergence: DivergenceType;
  /** JSON text. */
  delta: string;
  seedPolicy: SeedPolicy;
  name: string;
  deliberationIndex: number;
}

/** Forked is a new child world (Go: api.Forked). */
export interface Forked {
  fork: Fork;
  world: WorldSpec;
  run: WorldRun;
}

/** Segment is one stretch of a run's history (Go: world.Segment). */
export interface Segment {
  stream: string;
  worldId: string;
  toSeq: number;
}

/** HistoryPage is a window onto a run's full history (Go: world.HistoryPage). */
export interface HistoryPage {
  total: number;
  offset: number;
  events: LedgerEvent[];
  /** Leading positions of the whole history that belong to ancestors. */
  inherited: number;
  /** The history's streams, root first (each holds toSeq positions). */
  segments: Segment[];
}

/** HistoryFilter selects events of a history; empty fields select all (Go: world.HistoryFilter). */
export interface HistoryFilter {
  types: string[];
  reality: '' | Reality;
  /** Looked for in "TYPE STREAM #SEQ PAYLOAD", case-insensitively; RE2 syntax when regex. */
  text: string;
  regex: boolean;
}

/** HistoryMatch is an event of a history with its position (Go: world.HistoryMatch). */
export interface HistoryMatch {
  index: number;
  event: LedgerEvent;
}

/** HistoryMatches is one stretch of a search through a history (Go: world.HistoryMatches). */
export interface HistoryMatches {
  total: number;
  inherited: number;
  matches: HistoryMatch[];
  /** Positions [from, next) were searched; next === total when the search reached the end. */
  from: number;
  next: number;
}

/** TypeCount is how many events of a type a history holds (Go: world.TypeCount). */
export interface TypeCount {
  type: string;
  count: number;
}

export type ChangeKind = 'added' | 'removed' | 'changed';

/** Change is one difference between two JSON documents (Go: world.Change). */
export interface Change {
  /** JSON Pointer (RFC 6901). */
  path: string;
  kind: ChangeKind;
  a?: unknown;
  b?: unknown;
}

/** BranchDiff compares two runs after their shared history (Go: world.BranchDiff). */
export interface BranchDiff {
  a: string;
  b: string;
  commonWorldId?: string;
  sharedEvents: number;
  forkPoint?: Segment;
  stateA: unknown;
  stateB: unknown;
  stateChanges: Change[];
  eventsA: LedgerEvent[];
  eventsB: LedgerEvent[];
  eventsATotal: number;
  eventsBTotal: number;
}

/** StateAtTime is a run's state at a world time: after its last step at or before it, at Time (Go: world.StateAtTime). */
export interface StateAtTime {
  runId: string;
  time: number;
  state: unknown;
}

/** StatesAt is two runs' states at one world time and how they differ (Go: world.StatesAt). */
export interface StatesAt {
  at: number;
  a: StateAtTime;
  b: StateAtTime;
  changes: Change[];
}

/** VerifyDivergence is where a re-execution first differs (Go: world.Divergence). */
export interface VerifyDivergence {
  stream: string;
  seq: number;
  type: string;
  expected: string;
  actual: string;
  message: string;
}

/** VerifyReport is a replay's verdict (Go: world.VerifyReport). */
export interface VerifyReport {
  runId: string;
  events: number;
  steps: number;
  checkpoints: number;
  ok: boolean;
  divergence?: VerifyDivergence;
}

/** DeliberateInput starts a search over forks of a simulated world's run (Go: api.DeliberateInput). */
export interface DeliberateInput {
  runId: string;
  /** "" starts at the run's current state. */
  checkpointId: string;
  strategy: 'beam' | 'mcts';
  width: number;
  depth: number;
  budget: number;
  seeds: number;
  rounds: number;
  untilDone: boolean;
  apply: boolean;
  timeLimitMs: number;
  /** The id progress is reported under (done/total count branches) and cancelDeliberation stops it by. */
  op: string;
  /** > 0 runs the branches as jobs for the team's workers, this many queued at once; 0 or absent runs them here. */
  onWorkers?: number;
}

/** DeliberationCandidate is a first action a round tried (Go: deliberation.Candidate). */
export interface DeliberationCandidate {
  action: unknown;
  /** The best mean score found under this action. */
  score: number;
  mean: number;
  visits: number;
  /** The actions of the best line found, this one first. */
  line: unknown[];
  /** This action's own branch worlds (one per seed). */
  branches: string[];
  bestBranches: string[];
  /** The state at the end of the best line. */
  state?: unknown;
  failed?: string;
}

/** DeliberationBudget is what a round spent (Go: deliberation.Budget). */
export interface DeliberationBudget {
  branches: number;
  used: number;
  steps: number;
  deduplicated: number;
  depth: number;
  wallMs: number;
  /** Why the search ended: "budget" (all its branches recorded), "time" (its time limit), "exhausted" (nothing left within the depth). */
  stopped: string;
}

/** DeliberationRound is the record of one round (Go: deliberation.Round). */
export interface DeliberationRound {
  eventId?: string;
  deliberationIndex: number;
  parentRunId: string;
  parentWorldId: string;
  checkpointId: string;
  parentTime: number;
  strategy: string;
  width?: number;
  depth: number;
  seeds: number[];
  budget: DeliberationBudget;
  candidates: DeliberationCandidate[];
  chosen: unknown;
  /** Each scored branch's score, by its world (rounds recorded before scores were kept have none). */
  scores?: Record<string, number>;
  /** The run's world time after it took the round's choice; absent while it has not. */
  appliedAt?: number;
}

/** DeliberationResult is what a deliberation did (Go: deliberation.Result). */
export interface DeliberationResult {
  rounds: DeliberationRound[];
  run: WorldRun;
  done: boolean;
  state?: unknown;
  /** For a deliberation the user cancelled: that it stopped and what it kept (a cancel is an answer, not an error). */
  cancelled?: string;
}
