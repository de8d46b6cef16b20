// createApi builds the one typed DucklmApi over any Channel. Everything that
// is not transport lives here: method names, argument order, and turning what
// Go sends into what the types promise (a Go nil slice or map arrives as null
// and becomes [] or {}).
import { type Channel, EVENT_LEDGER, EVENT_NAVIGATE, EVENT_PROGRESS, EVENT_TOKENS } from './channel';
import { BridgeError, call } from './errors';
import type {
  BundleReport,
  ExportResult,
  HeldWorld,
  ImportResult,
  EmbedderChoices,
  Memory,
  MemoryDetail,
  MemoryPage,
  MemorySource,
  MemoryStatus,
  ModelInfo,
  RetrievedMemory,
  Approval,
  BranchDiff,
  StatesAt,
  CatalogEntry,
  Check,
  DeliberationCandidate,
  DeliberationResult,
  DeliberationRound,
  Example,
  RiskRule,
  DucklmApi,
  HistoryMatch,
  HistoryMatches,
  HistoryPage,
  LedgerEvent,
  Lineage,
  LineageOutline,
  Opened,
  Overview,
  Progress,
  RunDetail,
  RunState,
  RunSummary,
  DatabaseSaved,
  CopiedLineage,
  LocalCopy,
  DatabaseTest,
  DatabaseView,
  Worker,
  WorkerJob,
  WorkersView,
  Settings,
  SettingsCheck,
  SettingsSaved,
  SettingsView,
  StepOutcome,
  TaskGraph,
  TaskNode,
  Token,
  TrustedSigner,
  TrustedSigners,
  McpServer,
  TypeCount,
  WorldDetail,
  WorldPage,
} from './types';

/** list turns a Go nil slice (null) or a missing field into []. */
export function list<T>(v: T[] | null | undefined | unknown): T[] {
  return Array.isArray(v) ? (v as T[]) : [];
}

function obj<T extends object>(v: unknown, what: string): T {
  if (v === null || typeof v !== 'object') {
    throw new BridgeError(`ducklm's backend sent no ${what}`);
  }
  return v as T;
}

/** mcpServer fills a server's Go nil slices. */
function mcpServer(s: McpServer): McpServer {
  return { ...s, args: list<string>(s.args), safe: list<string>(s.safe), tools: list<McpServer['tools'][number]>(s.tools), refused: list<string>(s.refused) };
}

function node(n: TaskNode): TaskNode {
  return { ...n, depends_on: list(n.depends_on) };
}

function graph(g: TaskGraph | null | undefined): TaskGraph | undefined {
  return g ? { nodes: list<TaskNode>(g.nodes).map(node) } : undefined;
}

function runState(s: RunState | null | undefined): RunState | null {
  if (!s) return null;
  const steps: RunState['steps'] = {};
  for (const [id, rec] of Object.entries(s.steps ?? {})) {
    steps[id] = {
      ...rec,
      node: node(rec.node),
      ...(rec.result ? { result: { ...rec.result, filesChanged: list(rec.result.filesChanged) } } : {}),
    };
  }
  const request = { ...s.request };
  const plan = graph(s.request?.plan);
  if (plan) request.plan = plan;
  const g = graph(s.graph);
  const out: RunState = { ...s, request, steps };
  if (g) out.graph = g;
  else delete out.graph;
  return out;
}

/** settingsOf fills what Go leaves null or out (a nil models map). */
function settingsOf(s: Partial<Settings> | null | undefined): Settings {
  return {
    ollamaHost: s?.ollamaHost ?? '',
    models: s?.models && typeof s.models === 'object' ? { ...s.models } : {},
    approvalMode: s?.approvalMode ?? '',
    theme: s?.theme ?? '',
    // Go leaves these out when they are not set (omitempty): the defaults.
    ...(Array.isArray(s?.allowedHosts) && s.allowedHosts.length > 0 ? { allowedHosts: [...s.allowedHosts] } : {}),
    ...(typeof s?.worldMemoryMiB === 'number' && s.worldMemoryMiB > 0 ? { worldMemoryMiB: s.worldMemoryMiB } : {}),
  };
}

function events(v: LedgerEvent[] | null | undefined): LedgerEvent[] {
  return list(v);
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function round(r: DeliberationRound): DeliberationRound {
  return {
    ...r,
    seeds: list<number>(r.seeds),
    candidates: list<DeliberationCandidate>(r.candidates).map((c) => ({
      ...c,
      line: list(c.line),
      branches: list<string>(c.branches),
      bestBranches: list<string>(c.bestBranches),
    })),
  };
}

function importResultOf(v: unknown): ImportResult {
  const r = obj<ImportResult>(v, 'import result');
  return { ...r, report: bundleReport(r.report), addedIds: list<string>(r.addedIds) };
}

function databaseView(v: unknown): DatabaseView {
  const d = obj<DatabaseView>(v, 'database setting');
  return { ...d, local: d.local ?? null, canRestart: d.canRestart === true };
}

function bundleReport(v: unknown): BundleReport {
  const r = obj<BundleReport>(v, 'bundle report');
  return {
    ...r,
    roots: list<string>(r.roots),
    worlds: list<HeldWorld>(r.worlds).map((w) => ({ ...w, runs: list(w.runs) })),
  };
}

/** createApi returns the DucklmApi that talks through channel. */
export function createApi(channel: Channel): DucklmApi {
  const invoke = (method: string, ...args: unknown[]) => call(() => channel.call(method, args));

  function subscribe<T>(event: string, cb: (batch: T[]) => void) {
    const off = channel.on(event, (payload) => {
      if (Array.isArray(payload) && payload.length > 0) cb(payload as T[]);
    });
    let done = false;
    return () => {
      if (done) return;
      done = true;
      off();
    };
  }

  return {
    async overview() {
      const o = obj<Overview>(await invoke('Overview'), 'overview');
      return { ...o, recentEvents: events(o.recentEvents) };
    },
    checks: async () => list<Check>(await invoke('Checks')),
    async runs() {
      return list<RunSummary>(await invoke('Runs'));
    },
    submitTask: async (input) => obj(await invoke('SubmitTask', input), 'run'),
    async validatePlan(plan) {
      const c = obj<Awaited<ReturnType<DucklmApi['validatePlan']>>>(await invoke('ValidatePlan', plan), 'plan check');
      return { ...c, problems: list(c.problems) };
    },
    toolCatalog: async () => list<CatalogEntry>(await invoke('ToolCatalog')),
    riskRules: async () => list<RiskRule>(await invoke('RiskRules')),
    async runAtCheckpoint(checkpointId) {
      return runState(obj<RunState>(await invoke('RunAtCheckpoint', checkpointId), 'run state')) as RunState;
    },
    async runDetail(runId) {
      const d = obj<RunDetail>(await invoke('RunDetail', runId), 'run');
      return { ...d, state: runState(d.state), approvals: list(d.approvals) };
    },
    approvals: async () => list<Approval>(await invoke('Approvals')),
    answer: async (input) => {
      await invoke('Answer', input);
    },
    async stepScreenshot(runId, stepId) {
      const s = obj<{ mediaType: string; data: string }>(await invoke('StepScreenshot', runId, stepId), 'screenshot');
      return `data:${s.mediaType || 'image/png'};base64,${s.data}`;
    },
    async stepImage(runId, stepId, index) {
      const s = obj<{ mediaType: string; data: string }>(await invoke('StepImage', runId, stepId, index), 'image');
      return `data:${s.mediaType || 'image/png'};base64,${s.data}`;
    },
    cancelRun: async (runId) => {
      await invoke('CancelRun', runId);
    },
    resumeRun: async (runId) => {
      await invoke('ResumeRun', runId);
    },
    chooseFolder: async (title) => {
      const v = await invoke('ChooseFolder', title);
      return typeof v === 'string' ? v : '';
    },
    async models() {
      const m = obj<Awaited<ReturnType<DucklmApi['models']>>>(await invoke('Models'), 'model status');
      return { ...m, models: list(m.models) };
    },
    async getSettings() {
      const v = obj<SettingsView>(await invoke('GetSettings'), 'settings');
      return { ...v, settings: settingsOf(v.settings) };
    },
    async saveSettings(input) {
      const v = obj<SettingsSaved>(await invoke('SaveSettings', input), 'saved settings');
      return { ...v, settings: settingsOf(v.settings) };
    },
    async checkSettings(input) {
      const c = obj<SettingsCheck>(await invoke('CheckSettings', input), 'settings check');
      return { ...c, problems: list(c.problems) };
    },
    async testOllama(host) {
      const m = obj<ModelInfo>(await invoke('TestOllama', host), 'model status');
      return { ...m, models: list(m.models) };
    },
    getDatabase: async () => databaseView(await invoke('GetDatabase')),
    testDatabase: async (input) => obj<DatabaseTest>(await invoke('TestDatabase', input), 'connection test'),
    async saveDatabase(input) {
      const r = obj<DatabaseSaved>(await invoke('SaveDatabase', input), 'saved database setting');
      return { ...r, database: databaseView(r.database) };
    },
    async copyLocalToTeam(op) {
      const c = obj<LocalCopy>(await invoke('CopyLocalToTeam', op), 'copy of the local data');
      return {
        ...c,
        lineages: list<CopiedLineage>(c.lineages).map((l) => ({ ...l, import: importResultOf(l.import) })),
      };
    },
    async restartApp() {
      await invoke('RestartApp');
    },
    async workers() {
      const v = obj<WorkersView>(await invoke('Workers'), 'workers');
      return { ...v, workers: list<Worker>(v.workers).map((w) => ({ ...w, jobs: list<WorkerJob>(w.jobs) })) };
    },
    async lineage() {
      const l = obj<Lineage>(await invoke('Lineage'), 'lineage');
      return { nodes: list(l.nodes), edges: list(l.edges) };
    },
    async lineageOutline() {
      const o = obj<LineageOutline>(await invoke('LineageOutline'), 'lineage');
      return { worlds: list(o.worlds), forks: list(o.forks) };
    },
    async listWorlds(q) {
      const p = obj<WorldPage>(await invoke('ListWorlds', q), 'worlds');
      return { ...p, worlds: list(p.worlds) };
    },
    worldExamples: async () => list<Example>(await invoke('WorldExamples')),
    createWorld: async (input) => obj(await invoke('CreateWorld', input), 'world'),
    async runWorld(input) {
      const o = obj<StepOutcome>(await invoke('RunWorld', input), 'step outcome');
      return { ...o, emitted: list(o.emitted) };
    },
    async worldDetail(runId) {
      const d = obj<WorldDetail>(await invoke('WorldDetail', runId), 'world');
      return { ...d, runs: list(d.runs), checkpoints: list(d.checkpoints) };
    },
    checkpointWorld: async (runId) => obj(await invoke('CheckpointWorld', runId), 'checkpoint'),
    fork: async (input) => obj(await invoke('Fork', input), 'fork'),
    async history(runId, offset, limit) {
      const p = obj<HistoryPage>(await invoke('History', runId, offset, limit), 'history');
      return { ...p, events: events(p.events), segments: list(p.segments) };
    },
    async searchHistory(runId, filter, from, limit) {
      const m = obj<HistoryMatches>(await invoke('SearchHistory', runId, filter, from, limit), 'search result');
      return { ...m, matches: list<HistoryMatch>(m.matches) };
    },
    historyTypes: async (runId) => list<TypeCount>(await invoke('HistoryTypes', runId)),
    async diff(runA, runB) {
      const d = obj<BranchDiff>(await invoke('Diff', runA, runB), 'comparison');
      return {
        ...d,
        stateChanges: list(d.stateChanges),
        eventsA: events(d.eventsA),
        eventsB: events(d.eventsB),
      };
    },
    async statesAt(runA, runB, at) {
      const s = obj<StatesAt>(await invoke('StatesAt', runA, runB, at), 'states at a time');
      return { ...s, changes: list(s.changes) };
    },
    verify: async (runId) => obj(await invoke('Verify', runId), 'verification report'),
    async deliberate(input) {
      const r = obj<DeliberationResult>(await invoke('Deliberate', input), 'deliberation');
      return { ...r, rounds: list<DeliberationRound>(r.rounds).map(round) };
    },
    cancelDeliberation: async (op) => (await invoke('CancelDeliberation', op)) === true,
    cancelWorldRun: async (op) => (await invoke('CancelWorldRun', op)) === true,
    deliberations: async (runId) => list<DeliberationRound>(await invoke('Deliberations', runId)).map(round),
    async applyDeliberation(runId, index) {
      const o = obj<StepOutcome>(await invoke('ApplyDeliberation', runId, index), 'step outcome');
      return { ...o, emitted: list(o.emitted) };
    },
    exportBundle: async (input) => obj<ExportResult>(await invoke('ExportBundle', input), 'export result'),
    verifyBundle: async (path, op) => bundleReport(await invoke('VerifyBundle', path, op)),
    importBundle: async (input) => importResultOf(await invoke('ImportBundle', input)),
    trustSigner: async (fingerprint, from) => (await invoke('TrustSigner', fingerprint, from)) === true,
    async trustedSigners() {
      const t = obj<TrustedSigners>(await invoke('TrustedSigners'), 'list of trusted signers');
      return { ...t, signers: list<TrustedSigner>(t.signers) };
    },
    forgetSigner: async (fingerprint) => (await invoke('ForgetSigner', fingerprint)) === true,
    mcpServers: async () => list<McpServer>(await invoke('MCPServers')).map(mcpServer),
    addMcpServer: async (input) => mcpServer(obj<McpServer>(await invoke('AddMCPServer', input), 'MCP server')),
    async removeMcpServer(name) {
      await invoke('RemoveMCPServer', name);
    },
    testMcpServer: async (name) => mcpServer(obj<McpServer>(await invoke('TestMCPServer', name), 'MCP server')),
    markMcpToolSafe: async (server, tool, safe) => mcpServer(obj<McpServer>(await invoke('MarkMCPToolSafe', server, tool, safe), 'MCP server')),
    nativeDialogs: async () => (await invoke('NativeDialogs')) === true,
    chooseBundleToSave: async (title, name) => text(await invoke('ChooseBundleToSave', title, name)),
    chooseBundleToOpen: async (title) => text(await invoke('ChooseBundleToOpen', title)),
    suggestBundlePath: async (name) => text(await invoke('SuggestBundlePath', name)),
    memoryStatus: async () => obj<MemoryStatus>(await invoke('MemoryStatus'), 'memory status'),
    searchMemories: async (input) => list<RetrievedMemory>(await invoke('SearchMemories', input)),
    async listMemories(input) {
      const p = obj<MemoryPage>(await invoke('ListMemories', input), 'page of memories');
      return { memories: list<Memory>(p.memories), next: typeof p.next === 'string' ? p.next : '' };
    },
    async memoryDetail(id) {
      const d = obj<MemoryDetail>(await invoke('MemoryDetail', id), 'memory');
      return { ...d, sources: list<MemorySource>(d.sources) };
    },
    deleteMemory: async (id) => {
      await invoke('DeleteMemory', id);
    },
    async memoryEmbedders() {
      const c = obj<EmbedderChoices>(await invoke('MemoryEmbedders'), 'embedding models');
      const ollama = obj<ModelInfo>(c.ollama, 'Ollama status');
      return { ...c, ollama: { ...ollama, models: list<string>(ollama.models) }, embedding: list<string>(c.embedding) };
    },
    reindexMemories: async (input) => obj(await invoke('ReindexMemories', input), 're-embedding result'),
    cancelReindex: async () => (await invoke('CancelReindex')) === true,
    onLedgerEvents: (cb) => subscribe<LedgerEvent>(EVENT_LEDGER, cb),
    onTokens: (cb) => subscribe<Token>(EVENT_TOKENS, cb),
    onProgress: (cb) => subscribe<Progress>(EVENT_PROGRESS, cb),
    async takeOpen() {
      const o = obj<Opened>(await invoke('TakeOpen'), 'open request');
      return { ...o, route: o.route ?? { screen: '' } };
    },
    onNavigate: (cb) =>
      channel.on(EVENT_NAVIGATE, (payload) => {
        if (payload && typeof payload === 'object' && 'route' in payload) cb(payload as Opened);
      }),
  };
}
