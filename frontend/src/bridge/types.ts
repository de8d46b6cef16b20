// The shapes ducklm's Go side sends, written by hand so they say exactly what
// the JSON holds. The generated wailsjs/go/models.ts is not used: it types
// json.RawMessage as number[] while the window receives the decoded JSON
// value, and time.Duration as a number without saying it is nanoseconds.
// Field names and optionality follow the Go json tags: `omitempty` fields are
// optional here; Go nil slices (null) are normalised to [] by the api.
// They live in one file per domain (types-*.ts); this one gathers them and
// holds the API itself.
import type { Unsubscribe } from './channel';
import type { BundleReport, ExportInput, ExportResult, ImportInput, ImportResult, TrustedSigners } from './types-bundles';
import type { Check, Checkpoint, LedgerEvent, Overview, WorldRun } from './types-core';
import type {
  EmbedderChoices,
  MemoryDetail,
  MemoryListInput,
  MemoryPage,
  MemorySearch,
  MemoryStatus,
  ReindexInput,
  ReindexResult,
  RetrievedMemory,
} from './types-memory';
import type {
  AnswerInput,
  Approval,
  CatalogEntry,
  ModelInfo,
  Opened,
  PlanCheck,
  Progress,
  RiskRule,
  RunDetail,
  RunState,
  RunSummary,
  TaskInput,
  Token,
} from './types-runs';
import type { McpServer, McpServerInput, Settings, SettingsCheck, SettingsSaved, SettingsView } from './types-settings';
import type { DatabaseInput, DatabaseSaved, DatabaseTest, DatabaseView, LocalCopy, WorkersView } from './types-team';
import type {
  BranchDiff,
  StatesAt,
  Created,
  DeliberateInput,
  DeliberationResult,
  DeliberationRound,
  Example,
  ForkInput,
  Forked,
  HistoryFilter,
  HistoryMatches,
  HistoryPage,
  Lineage,
  LineageOutline,
  StepInput,
  StepOutcome,
  TypeCount,
  VerifyReport,
  WorldDetail,
  WorldInput,
  WorldPage,
  WorldQuery,
} from './types-worlds';

export type { Unsubscribe } from './channel';
export type * from './types-core';
export type * from './types-runs';
export type * from './types-worlds';
export type * from './types-memory';
export type * from './types-bundles';
export type * from './types-settings';
export type * from './types-team';

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
  /** A task run's state at one of its checkpoints: what a fork from it starts from (its plan then). */
  runAtCheckpoint(checkpointId: string): Promise<RunState>;
  approvals(): Promise<Approval[]>;
  answer(input: AnswerInput): Promise<void>;
  /** The screenshot a browser step took of its page, as a data: URL. */
  stepScreenshot(runId: string, stepId: string): Promise<string>;
  /** Loads image number index (from 0) an MCP step's server answered with, as a data: URL. */
  stepImage(runId: string, stepId: string, index: number): Promise<string>;
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
  /** The Database field: the stored address (never its password), what is in use, what overrides it. */
  getDatabase(): Promise<DatabaseView>;
  /** Connects to the address (changing nothing there) and answers with a sentence. */
  testDatabase(input: DatabaseInput): Promise<DatabaseTest>;
  /** Stores the address for the next start ("" for this machine's SQLite); rejects a non-PostgreSQL address. */
  saveDatabase(input: DatabaseInput): Promise<DatabaseSaved>;
  /** On a team's database: copies each local lineage as a bundle through the import path, reporting each import; the local file is only read. */
  copyLocalToTeam(op: string): Promise<LocalCopy>;
  /** Quits the desktop window and starts ducklm again; in a browser it rejects with what to do instead. */
  restartApp(): Promise<void>;
  /** The team's `ducklm worker` processes: heartbeat, state, slots and the jobs they run now. */
  workers(): Promise<WorkersView>;
  lineage(): Promise<Lineage>;
  /** The lineage with only what a drawing of it needs: a third of the bytes. */
  lineageOutline(): Promise<LineageOutline>;
  /** A page of worlds, newest first, with each one's latest run and fork; for lists, not drawings. */
  listWorlds(q: WorldQuery): Promise<WorldPage>;
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
  /** Both runs' states at world time at (each after its last step at or before it), and their differences. */
  statesAt(runA: string, runB: string, at: number): Promise<StatesAt>;
  verify(runId: string): Promise<VerifyReport>;
  /** Searches forks of a simulated run's world and ranks its next actions; rejects with why it stopped. */
  deliberate(input: DeliberateInput): Promise<DeliberationResult>;
  /** Stops the deliberation running as op; false when none was. */
  cancelDeliberation(op: string): Promise<boolean>;
  /** Stops the world run on the team's workers started as op; false when none was running. */
  cancelWorldRun(op: string): Promise<boolean>;
  /** The recorded rounds of a run's deliberations, oldest first. */
  deliberations(runId: string): Promise<DeliberationRound[]>;
  /** Steps the run with the choice of its recorded round index, if the run is still where that round began. */
  applyDeliberation(runId: string, index: number): Promise<StepOutcome>;
  /** Writes a run or world to one signed .ducklm file. */
  exportBundle(input: ExportInput): Promise<ExportResult>;
  /** Checks a bundle file without writing anything; a bad bundle is a report with its problem. */
  verifyBundle(path: string, op: string): Promise<BundleReport>;
  /** Imports a bundle file, or says why nothing was written. */
  importBundle(input: ImportInput): Promise<ImportResult>;
  /**
   * Adds a bundle signer to this installation's trusted_keys (from: the
   * bundle file, for the note); false when it was trusted already.
   */
  trustSigner(fingerprint: string, from: string): Promise<boolean>;
  /** The signers whose bundles import without asking, and this installation's own signing fingerprint. */
  trustedSigners(): Promise<TrustedSigners>;
  /** Stops trusting a signer (removes it from trusted_keys); false when it was not listed. */
  forgetSigner(fingerprint: string): Promise<boolean>;
  /** The MCP servers whose tools runs may use, how each stands and its tools (starts those not running). */
  mcpServers(): Promise<McpServer[]>;
  /** Adds an MCP server and starts it; one that cannot start is kept, its status saying why. */
  addMcpServer(input: McpServerInput): Promise<McpServer>;
  /** Stops and forgets an MCP server. */
  removeMcpServer(name: string): Promise<void>;
  /** Starts an MCP server afresh and lists its tools; rejects with why it cannot start. */
  testMcpServer(name: string): Promise<McpServer>;
  /** Marks one of a server's tools safe (ask_risky runs its calls without asking), or not. */
  markMcpToolSafe(server: string, tool: string, safe: boolean): Promise<McpServer>;
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
