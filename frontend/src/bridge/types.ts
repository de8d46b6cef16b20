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
}

/** OutlineFork is a fork as a drawing of the lineage needs it (Go: world.OutlineFork). */
export interface OutlineFork {
  id: string;
  from: string;
  to: string;
  divergence: DivergenceType;
  at: number;
}

/** LineageOutline is the whole fork DAG with only what draws it (Go: world.Outline). */
export interface LineageOutline {
  worlds: OutlineWorld[];
  forks: OutlineFork[];
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

// ---- memory (Go: memory, service, api) ----

/** MemoryType is what kind of thing a memory records (Go: memorypolicy.Type). */
export type MemoryType = 'fact' | 'observation' | 'procedure' | 'hypothesis' | 'preference';

/** MemoryProvenance says where a memory came from (Go: memory.Provenance). */
export interface MemoryProvenance {
  runId?: string;
  /** The event that holds the content (a step.finished event). */
  eventId?: string;
  reality: Reality;
  /** The simulated world of a world-local hypothesis. */
  worldId?: string;
}

/** Memory is one stored memory (Go: memory.Memory). Its text is already redacted. */
export interface Memory {
  id: string;
  text: string;
  type: MemoryType;
  embeddingModel: string;
  contentHash: string;
  provenance: MemoryProvenance;
  weight: number;
  mergedCount: number;
  createdAt: string;
  mergedAt?: string;
  updatedAt: string;
}

/** RetrievedMemory is one search result (Go: memory.Retrieved). */
export interface RetrievedMemory {
  id: string;
  text: string;
  type: MemoryType;
  provenance: MemoryProvenance;
  weight: number;
  mergedCount: number;
  createdAt: string;
  mergedAt?: string;
  /** Cosine similarity to the query, -1 to 1. */
  similarity: number;
  embeddingModel: string;
}

/** MemoryFilter narrows a search or a listing; "" does not filter (Go: api.MemoryFilter). */
export interface MemoryFilter {
  type: MemoryType | '';
  reality: Reality | '';
  runId: string;
}

/** MemorySearch is a semantic search (Go: api.MemorySearch). */
export interface MemorySearch extends MemoryFilter {
  query: string;
  /** 1 to 100; 0 means 20. */
  k: number;
}

/** MemoryListInput asks for one page, newest first (Go: api.MemoryListInput). */
export interface MemoryListInput extends MemoryFilter {
  /** 0 means 50. */
  limit: number;
  /** The previous page's next; "" is the first page. */
  before: string;
}

/** MemoryPage is one page of memories (Go: memory.Page). */
export interface MemoryPage {
  memories: Memory[];
  /** The cursor of the next page; "" on the last one. */
  next: string;
}

/** MemorySource is one provenance merged into a memory, placed in the ledger (Go: service.MemorySource). */
export interface MemorySource extends MemoryProvenance {
  criticScore: number;
  worth: number;
  addedAt: string;
  /** Where the source event sits; seq is absent when the event is not in this ledger. */
  stream?: string;
  seq?: number;
  eventType?: string;
  /** The task step whose result it was. */
  step?: string;
}

/** MemoryDetail is a memory with every provenance (Go: service.MemoryDetail). */
export interface MemoryDetail {
  memory: Memory;
  dimensions: number;
  sources: MemorySource[];
}

/** ReindexProgress is the state of the latest re-embedding (Go: memory.Progress). */
export interface ReindexProgress {
  model: string;
  done: number;
  total: number;
  running: boolean;
  error?: string;
}

/** MemoryStatus is the memory screen's header (Go: api.MemoryStatus). */
export interface MemoryStatus {
  /** Every memory, whichever model embedded it. */
  memories: number;
  /** The embedding model in service. */
  model: string;
  builtin: boolean;
  /** Memories in the index of model. */
  indexed: number;
  /** Memories not yet embedded with model. */
  stale: number;
  /** "snapshot" or "database". */
  loadedFrom: string;
  /** Go time.Duration: nanoseconds. */
  loadTimeNs: number;
  reindex?: ReindexProgress;
  /** The settings' embedder, when one is set. */
  preferred?: string;
}

/** EmbedderChoices are the models a re-embedding can use (Go: api.EmbedderChoices). */
export interface EmbedderChoices {
  current: string;
  builtin: string;
  preferred?: string;
  ollama: ModelInfo;
  /** Ollama models whose names say they embed. */
  embedding: string[];
}

/** ReindexInput starts a re-embedding (Go: api.ReindexInput). */
export interface ReindexInput {
  /** An Ollama model or the built-in one; "" means the settings' embedder, else a repair. */
  model: string;
  /** The id progress reports carry. */
  op: string;
}

/** ReindexResult is what a re-embedding did (Go: service.ReindexResult). */
export interface ReindexResult {
  model: string;
  previous: string;
  reembedded: number;
  indexed: number;
  /** Go time.Duration: nanoseconds. */
  tookNs: number;
  settingsSaved: boolean;
}

// ---- bundles (Go: api, bundle) ----

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

// ---- settings (Go: settings, api) ----

/** Theme is the look the user chose; "system" follows the operating system. */
export type Theme = 'light' | 'dark' | 'system';

/** The model roles the router picks a model for (Go: router.Role). */
export type ModelRole = 'planner' | 'coder' | 'critic' | 'embedder';

/** Settings are the stored preferences (Go: settings.Settings); "" means ducklm's default. */
export interface Settings {
  /** host, host:port or a URL; "" uses OLLAMA_HOST. */
  ollamaHost: string;
  /** The default model per role; a missing role is left to the router. */
  models: Partial<Record<ModelRole, string>>;
  approvalMode: ApprovalMode | '';
  theme: Theme | '';
}

/** SettingsView is the settings screen's data (Go: api.SettingsView). */
export interface SettingsView {
  settings: Settings;
  dataDir: string;
  /** The Ollama host in use now. */
  ollamaHost: string;
  /** The host an empty host setting means. */
  defaultHost: string;
}

/** SettingsProblem is one refused field, e.g. "ollamaHost" or "models.planner" (Go: settings.Problem). */
export interface SettingsProblem {
  field: string;
  message: string;
}

/** SettingsCheck is what saving would refuse (Go: api.SettingsCheck). */
export interface SettingsCheck {
  valid: boolean;
  problems: SettingsProblem[];
}

/** SettingsSaved is what saving did (Go: api.Saved): a new host is in use at once. */
export interface SettingsSaved {
  /** As stored: spaces trimmed, roles left to the router dropped. */
  settings: Settings;
  /** The Ollama host in use from now on. */
  ollamaHost: string;
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
  getSettings(): Promise<SettingsView>;
  /** Stores and applies the settings (a new Ollama host serves the next call); rejects with the first problem. */
  saveSettings(settings: Settings): Promise<SettingsSaved>;
  /** Says, field by field, what saveSettings would refuse; stores nothing. */
  checkSettings(settings: Settings): Promise<SettingsCheck>;
  /** Asks the Ollama at host ("" = the one in use) for its models; rejects when host cannot be an Ollama host. */
  testOllama(host: string): Promise<ModelInfo>;
  lineage(): Promise<Lineage>;
  /** The lineage with only what a drawing of it needs: a third of the bytes. */
  lineageOutline(): Promise<LineageOutline>;
  worldExamples(): Promise<Example[]>;
  createWorld(input: WorldInput): Promise<Created>;
  runWorld(input: StepInput): Promise<StepOutcome>;
  worldDetail(runId: string): Promise<WorldDetail>;
  checkpointWorld(runId: string): Promise<Checkpoint>;
  fork(input: ForkInput): Promise<Forked>;
  history(runId: string, offset: number, limit: number): Promise<HistoryPage>;
  /** Events of a history that pass filter, from position from on; go on from the answer's next. */
  searchHistory(runId: string, filter: HistoryFilter, from: number, limit: number): Promise<HistoryMatches>;
  historyTypes(runId: string): Promise<TypeCount[]>;
  diff(runA: string, runB: string): Promise<BranchDiff>;
  verify(runId: string): Promise<VerifyReport>;
  /** Writes a run or world to one signed .ducklm file. */
  exportBundle(input: ExportInput): Promise<ExportResult>;
  /** Checks a bundle file without writing anything; a bad bundle is a report with its problem. */
  verifyBundle(path: string, op: string): Promise<BundleReport>;
  /** Imports a bundle file, or says why nothing was written. */
  importBundle(input: ImportInput): Promise<ImportResult>;
  /** Adds a bundle signer to this installation's trusted_keys (from: the bundle file, for the note); false when trusted already. */
  trustSigner(fingerprint: string, from: string): Promise<boolean>;
  /** True in the desktop window, which has native file dialogs; false in a browser. */
  nativeDialogs(): Promise<boolean>;
  /** The native save dialog for a bundle named after name; "" when cancelled. */
  chooseBundleToSave(title: string, name: string): Promise<string>;
  /** The native open dialog for a bundle file; "" when cancelled. */
  chooseBundleToOpen(title: string): Promise<string>;
  /** A full path for a new bundle named after name that does not exist yet. */
  suggestBundlePath(name: string): Promise<string>;
  memoryStatus(): Promise<MemoryStatus>;
  searchMemories(input: MemorySearch): Promise<RetrievedMemory[]>;
  listMemories(input: MemoryListInput): Promise<MemoryPage>;
  memoryDetail(id: string): Promise<MemoryDetail>;
  deleteMemory(id: string): Promise<void>;
  memoryEmbedders(): Promise<EmbedderChoices>;
  /** Resolves when the new model serves; progress arrives through onProgress as input.op. */
  reindexMemories(input: ReindexInput): Promise<ReindexResult>;
  /** Stops a running re-embedding; false when none runs. */
  cancelReindex(): Promise<boolean>;
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
