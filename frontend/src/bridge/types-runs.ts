// Task runs (Go: backend task types, runtime, api).
// Part of the bridge's types: see types.ts for how they are written.
import type { BlobRef, RunStatus, WorldRun } from './types-core';
import type { McpTool } from './types-settings';

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
  /** Review the results and answer even though the plan is the user's (a model's plan always is). */
  review?: boolean;
  /** The bound on review rounds (default 4). */
  maxReviews?: number;
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
  /** True for a tool that ran confined (bubblewrap, or ducklm's own checks): read confinement for where. */
  sandboxed: boolean;
  /** Where the step ran (Go: backend.Confinement); the run detail fills it in for older results. */
  confinement?: Confinement;
  /** Where a portable step's work ran (Go: backend.Placement): absent for other tools and on SQLite. */
  placement?: Placement;
}

/**
 * Placement is where a portable step's work ran (Go: backend.Placement): on
 * the team's workers (branches on workers), or here and why.
 */
export interface Placement {
  workers?: number;
  branches?: number;
  here?: string;
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
  denied?: boolean;
}

/** PlanningAttempt is one answer of a planning model (Go: runtime.PlanningAttempt). */
export interface PlanningAttempt {
  attempt: number;
  revision?: number;
  /** The review round it answered. */
  review?: number;
  /** The answer's stream was cut, and it came from asking again without streaming. */
  unstreamed?: boolean;
  model: string;
  options?: Record<string, unknown>;
  answer: string;
  normalised?: string[];
  error?: string;
  accepted?: boolean;
}

/** Revision is an open round of revising a plan after failed steps (Go: runtime.Revision). */
export interface Revision {
  round: number;
  failed: string[];
  kept: string[];
  rule: string;
  reason: string;
}

/** RunAnswer is a run's answer to its task (Go: runtime.RunAnswer). */
export interface RunAnswer {
  text: string;
  /** The steps the answer rests on; none for a task answered without a step. */
  cites?: string[];
  model?: string;
  /** The review round that answered, 0 or absent for a direct answer. */
  review?: number;
}

/** ReviewRound is one round of reading the results (Go: runtime.ReviewRound). */
export interface ReviewRound {
  round: number;
  kept: string[];
  reason: string;
}

/** RunState is a task run's folded state (Go: runtime.RunState). */
export interface RunState {
  runId: string;
  worldId: string;
  request: TaskRequest;
  status: RunStatus;
  statusReason?: string;
  /** The run is paused until a model can plan its task (Resume cannot help before). */
  needsModel?: boolean;
  graph?: TaskGraph;
  steps: Record<string, StepRecord>;
  planAttempts: number;
  replans: number;
  invalidPlan?: string;
  planSource?: string;
  planning?: PlanningAttempt[];
  revision?: Revision;
  revised?: Revision[];
  ticks: number;
  stepsRun: number;
  response?: string;
  /** The run's answer to its task, with the steps it rests on (Go: runtime.RunAnswer). */
  answer?: RunAnswer;
  /** Review rounds begun, in order: the orchestrator read the results before answering. */
  reviews?: ReviewRound[];
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
  /**
   * Where the step runs, and so which limits hold it (Go: backend.Confinement):
   * a sandbox under the process limits, ducklm itself inside the workspace,
   * ducklm itself reaching approved hosts (web_fetch before it had a worker),
   * a world worker, or a web worker (web_fetch: in bubblewrap when sandboxed
   * says so, its only way out ducklm's host checks).
   */
  confinement?: Confinement;
  inDoubt: boolean;
  limits: Limits;
  /** The step runs once more if it times out (its plan says that is safe); otherwise a timeout fails it. */
  retryOnTimeout: boolean;
  /** For file_write: what the file holds now (Go: runtime.CurrentFile). */
  current?: CurrentFile;
  /** For web_fetch and browser: the request and its limits (Go: web.Plan). */
  web?: WebPlan;
  /** The outside content (web pages) the run had read when this step was planned: it may have asked for the step. */
  untrusted?: string[];
  /** For a tool of an MCP server: the server, its tool and the server's own readOnlyHint (Go: backend.MCPTool). */
  mcp?: McpTool;
}

/** Confinement is where a tool's call runs (Go: backend.Confinement). */
export type Confinement = 'sandbox' | 'workspace' | 'hosts' | 'world' | 'web_worker';

/** WebPlan is what a web step will request, as its approval card shows it (Go: web.Plan). */
export interface WebPlan {
  url: string;
  host: string;
  method: string;
  bodyBytes?: number;
  maxBytes: number;
  maxRedirects: number;
  timeoutMs: number;
  /** The kind of address the host names by itself ("loopback", "private"…), absent for a name or a public address. */
  local?: string;
  /** The page is rendered in the sandboxed Chromium (browser steps). */
  browser?: boolean;
}

/** CurrentFile is what a file a file_write would write holds now (Go: runtime.CurrentFile). */
export interface CurrentFile {
  /** False when the write creates the file. */
  exists: boolean;
  content?: string;
  bytes: number;
  truncated?: boolean;
  binary?: boolean;
  error?: string;
}

/** RunSummary is one row of the runs list (Go: runtime.RunSummary). */
export interface RunSummary {
  run: WorldRun;
  task: string;
  /** The name a fork was given ("… (edited plan)"), as its view heads it; absent for a run started from a task. */
  name?: string;
  approvals: number;
  steps: number;
  stepsDone: number;
  /** The host of the installation that drives the run when another one on the team's database does. */
  drivenBy?: string;
  /** The first line of the run's answer. */
  answer?: string;
}

/** RunDetail is what the run view shows (Go: api.RunDetail). */
export interface RunDetail {
  run: WorldRun;
  state: RunState | null;
  approvals: Approval[];
  /** Who drives a run another installation on the team's database drives, and when it goes on (absent otherwise). */
  drivenElsewhere?: string;
}

/** TaskInput is the new-task form (Go: api.TaskInput). */
export interface TaskInput {
  task: string;
  /** An explicit plan as JSON text; "" lets the planner plan. */
  plan: string;
  approvalMode: ApprovalMode;
  models: Record<string, string>;
  workspace: string;
  /** Create the workspace folder when it does not exist (asked first: otherwise refused). */
  createWorkspace?: boolean;
  timeoutSeconds: number;
  maxSteps: number;
  /** Review an explicit plan's or one-liner's results and answer the task (a model's plan always is). */
  review?: boolean;
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
  /** True for a tool whose calls may run on the team's workers (Go: backend.Portable). */
  portable?: boolean;
  /** For a tool of an MCP server: which server serves it (Go: backend.MCPTool). */
  mcp?: McpTool;
  /** True for a tool whose reads are safe to repeat: one a crash cut short runs again (Go: backend.Repeatable). */
  repeatable?: boolean;
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
  /** Allow a web step's host for the rest of the run. */
  allowHost?: boolean;
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
  route: { screen: string; runId?: string; select?: string; seq?: number; compare?: string[]; world?: boolean };
  error?: string;
}
