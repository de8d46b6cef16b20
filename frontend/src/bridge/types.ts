// The shapes ducklm's Go side sends, written by hand so they say exactly what
// the JSON holds. The generated wailsjs/go/models.ts is not used: it types
// json.RawMessage as number[] while the window receives the decoded JSON
// value, and time.Duration as a number without saying it is nanoseconds.
// Field names and optionality follow the Go json tags: `omitempty` fields are
// optional here; Go nil slices (null) are normalised to [] by the api.
import type { Unsubscribe } from './channel';

export type { Unsubscribe } from './channel';

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
  worlds: number;
  runs: number;
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

// ---- worlds, runs, checkpoints, forks (Go: backend) ----

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

// ---- task runs (Go: backend task types, runtime) ----

/** Limits bound a sandboxed step (Go: backend.Limits). */
export interface Limits {
  /** Go time.Duration: nanoseconds. */
  timeout: number;
  memoryBytes: number;
  cpuSeconds: number;
  fileBytes: number;
  outputBytes: number;
  processes: number;
}

/** TaskNode is one step of a plan (Go: backend.TaskNode). */
export interface TaskNode {
  id: string;
  /** "tool" or "coder". */
  kind: string;
  tool?: string;
  args?: unknown;
  depends_on: string[];
  title?: string;
}

export interface TaskGraph {
  nodes: TaskNode[];
}

export type ApprovalMode = 'ask_every' | 'ask_risky' | 'auto_sandboxed';

/** TaskRequest is what a user submitted (Go: runtime.TaskRequest). */
export interface TaskRequest {
  task: string;
  plan?: TaskGraph;
  approvalMode: ApprovalMode;
  models?: Record<string, string>;
  workspace?: string;
  limits: Limits;
  maxSteps: number;
  maxReplans: number;
  maxRetries: number;
  concurrency: number;
}

export type StepState = 'pending' | 'running' | 'awaiting_approval' | 'done' | 'failed' | 'skipped' | 'in_doubt';

/** ApprovalRequest is an open request on a step (Go: runtime.approvalRequest). */
export interface ApprovalRequest {
  requestId: string;
  step: string;
  tool: string;
  args: unknown;
  rule: string;
  risk: string;
  why: string;
  network: boolean;
  sandboxed: boolean;
  limits: Limits;
  inDoubt?: boolean;
}

/** StepResult is a finished step (Go: runtime.stepFinished). */
export interface StepResult {
  step: string;
  attempt: number;
  ok: boolean;
  exitCode: number;
  timedOut: boolean;
  truncated: boolean;
  durationMs: number;
  stdout?: BlobRef;
  stderr?: BlobRef;
  stdoutTail?: string;
  stderrTail?: string;
  filesChanged?: string[];
  output?: unknown;
  error?: string;
  retryable?: boolean;
  sandboxed: boolean;
}

/** Critique is the critic's score of a step (Go: runtime.critiquePayload). */
export interface Critique {
  step: string;
  score: number;
  explanation: string;
  source: string;
  model?: string;
}

/** CoderScript is the script a coder step wrote (Go: runtime.coderScript). */
export interface CoderScript {
  step: string;
  language: string;
  blob: BlobRef;
  source: string;
  model?: string;
}

/** StepRecord is a step's folded state (Go: runtime.StepRecord). */
export interface StepRecord {
  node: TaskNode;
  state: StepState;
  attempts: number;
  approval?: ApprovalRequest;
  approved: boolean;
  approvedArgs?: unknown;
  network: boolean;
  result?: StepResult;
  critique?: Critique;
  script?: CoderScript;
  error?: string;
}

/** RunState is a task run's folded state (Go: runtime.RunState). */
export interface RunState {
  runId: string;
  worldId: string;
  request: TaskRequest;
  status: RunStatus;
  statusReason?: string;
  graph?: TaskGraph;
  steps: Record<string, StepRecord>;
  planAttempts: number;
  replans: number;
  invalidPlan?: string;
  ticks: number;
  stepsRun: number;
  response?: string;
  error?: string;
  seq: number;
}

/** Approval is an open approval request as the cards show it (Go: runtime.Approval). */
export interface Approval {
  runId: string;
  requestId: string;
  step: string;
  title?: string;
  tool: string;
  args: unknown;
  rule: string;
  risk: string;
  why: string;
  network: boolean;
  sandboxed: boolean;
  inDoubt: boolean;
  limits: Limits;
}

/** RunSummary is one row of the runs list (Go: runtime.RunSummary). */
export interface RunSummary {
  run: WorldRun;
  task: string;
  approvals: number;
  steps: number;
  stepsDone: number;
}

/** RunDetail is what the run view shows (Go: api.RunDetail). */
export interface RunDetail {
  run: WorldRun;
  state: RunState | null;
  approvals: Approval[];
}

/** TaskInput is the new-task form (Go: api.TaskInput). */
export interface TaskInput {
  task: string;
  /** An explicit plan as JSON text; "" lets the planner plan. */
  plan: string;
  approvalMode: ApprovalMode;
  models: Record<string, string>;
  workspace: string;
  timeoutSeconds: number;
  maxSteps: number;
}

/** PlanCheck is the result of validating a plan (Go: api.PlanCheck). */
export interface PlanCheck {
  valid: boolean;
  problems: string[];
  steps: number;
}

/** CatalogEntry describes a tool (Go: tool.CatalogEntry). */
export interface CatalogEntry {
  name: string;
  description: string;
  args_schema: unknown;
}

export type RiskLevel = 'low' | 'medium' | 'high';

/** RiskRule is one row of the risk policy (Go: router.Rule). */
export interface RiskRule {
  id: string;
  level: RiskLevel;
  description: string;
}

/** AnswerInput answers an approval card (Go: api.AnswerInput). */
export interface AnswerInput {
  runId: string;
  requestId: string;
  approve: boolean;
  /** Edited arguments as JSON text; "" keeps them. */
  args: string;
  network: boolean;
  reason: string;
  idempotencyKey: string;
}

/** ModelInfo is what the UI shows about Ollama and the sandbox (Go: api.ModelInfo). */
export interface ModelInfo {
  host: string;
  reachable: boolean;
  error?: string;
  models: string[];
  sandboxed: boolean;
}

/** Token is a batch element of streamed model text (Go: service.Token). */
export interface Token {
  runId: string;
  stepId?: string;
  text: string;
}

/**
 * Progress is how far one piece of long work has come (Go: service.Progress).
 * op is the id the screen chose when it started the work.
 */
export interface Progress {
  op: string;
  phase: string;
  done: number;
  total: number;
  /** What done and total count: "bytes", "entries", "memories". */
  unit: string;
}

/**
 * Opened is what `ducklm open` asked the window to show (Go: api.Opened):
 * a route, or home with the sentence saying why the route cannot be shown.
 */
export interface Opened {
  route: { screen: string; runId?: string; select?: string; seq?: number };
  error?: string;
}

// ---- worlds (Go: api, world) ----

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

/**
 * DucklmApi is everything the screens may ask of ducklm's backend: one method
 * per method of the Go API facade (backend/api), built over any Channel by
 * createApi. Calls reject only with BridgeError.
 */
export interface DucklmApi {
  overview(): Promise<Overview>;
  checks(): Promise<Check[]>;
  runs(): Promise<RunSummary[]>;
  submitTask(input: TaskInput): Promise<WorldRun>;
  validatePlan(plan: string): Promise<PlanCheck>;
  toolCatalog(): Promise<CatalogEntry[]>;
  riskRules(): Promise<RiskRule[]>;
  runDetail(runId: string): Promise<RunDetail>;
  approvals(): Promise<Approval[]>;
  answer(input: AnswerInput): Promise<void>;
  cancelRun(runId: string): Promise<void>;
  resumeRun(runId: string): Promise<void>;
  /** Opens the native folder dialog; "" when the user cancels. */
  chooseFolder(title: string): Promise<string>;
  models(): Promise<ModelInfo>;
  lineage(): Promise<Lineage>;
  worldExamples(): Promise<Example[]>;
  createWorld(input: WorldInput): Promise<Created>;
  runWorld(input: StepInput): Promise<StepOutcome>;
  worldDetail(runId: string): Promise<WorldDetail>;
  checkpointWorld(runId: string): Promise<Checkpoint>;
  fork(input: ForkInput): Promise<Forked>;
  history(runId: string, offset: number, limit: number): Promise<HistoryPage>;
  diff(runA: string, runB: string): Promise<BranchDiff>;
  verify(runId: string): Promise<VerifyReport>;
  /** Receives batches of committed events, in commit order. */
  onLedgerEvents(cb: (events: LedgerEvent[]) => void): Unsubscribe;
  /** Receives batches of streamed model tokens. */
  onTokens(cb: (tokens: Token[]) => void): Unsubscribe;
  /** What `ducklm open` asked this window to show at start, once; screen "" when nothing. */
  takeOpen(): Promise<Opened>;
  /** Receives what a later `ducklm open` asks the running window to show. */
  onNavigate(cb: (opened: Opened) => void): Unsubscribe;
  /** Receives the progress of long work (the latest report of each op per batch). */
  onProgress(cb: (progress: Progress[]) => void): Unsubscribe;
}

/** The window event that carries LedgerEvent[] batches. */
export const LEDGER_EVENTS = 'ledger:events';
