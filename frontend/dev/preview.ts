// Development only: `npm run dev`, then open /dev/preview.html to see the
// screens in a plain browser. It stands in for the Wails window (window.go
// and window.runtime) with an in-memory backend (fakeBackend.ts) holding
// made-up runs, approvals and worlds. The production build never includes
// this file: vite builds index.html alone.
//
// ?state=empty | error | slow-checks picks a scenario for Home;
// ?nodes=5000 adds a large made-up lineage; ?ollama=off and ?sandbox=off
// show those problems; #/… opens a screen.
import { FakeBackend, LIMITS, RULES, TOOLS, GRID_SOURCE, sleep } from './fakeBackend';

const params = new URLSearchParams(location.search);
const state = params.get('state') ?? 'full';
const b = new FakeBackend({
  ollama: params.get('ollama') !== 'off',
  sandboxed: params.get('sandbox') !== 'off',
  bigLineage: Number(params.get('nodes') ?? 0) || 0,
});
if (state !== 'empty') b.seed();

const latency = (ms = 80) => sleep(ms);
const failIfError = () => {
  if (state === 'error') {
    throw 'The data directory /home/ada/.local/share/ducklm was written by a newer ducklm (schema 5); this ducklm knows schema 2. Install the newer ducklm, or point DUCKLM_DATA_DIR elsewhere.';
  }
};

function runSummaries() {
  const out = [];
  for (const run of b.runs.values()) {
    const world = b.worlds.get(run.worldId);
    if (world?.domain !== 'real' || run.id.startsWith('run_big')) continue;
    const st = b.taskState(run.id);
    const steps = Object.values(st?.steps ?? {}) as { state: string }[];
    out.push({ run: { ...run }, task: st?.request.task || 'explicit plan', approvals: b.approvals(run.id).length, steps: steps.length, stepsDone: steps.filter((s) => s.state === 'done').length });
  }
  return out.sort((x, y) => y.approvals - x.approvals || y.run.createdAt.localeCompare(x.run.createdAt));
}

function validatePlan(text: string) {
  let plan: { nodes?: { id?: string; tool?: string; kind?: string; depends_on?: string[] }[] };
  try {
    plan = JSON.parse(text);
  } catch (e) {
    return { valid: false, problems: [`the plan is not JSON: ${(e as Error).message}`], steps: 0 };
  }
  const problems: string[] = [];
  const ids = new Set<string>();
  for (const n of plan.nodes ?? []) {
    if (!n.id) problems.push('a step has no id');
    else if (ids.has(n.id)) problems.push(`step id ${n.id} is used twice`);
    else ids.add(n.id);
    if (n.kind !== 'coder' && !TOOLS.some((t) => t.name === n.tool)) problems.push(`step ${n.id} uses the unknown tool "${n.tool}"`);
  }
  for (const n of plan.nodes ?? []) for (const d of n.depends_on ?? []) if (!ids.has(d)) problems.push(`step ${n.id} depends on ${d}, which is not in the plan`);
  if ((plan.nodes ?? []).length === 0) problems.push('the plan has no steps');
  return problems.length ? { valid: false, problems, steps: 0 } : { valid: true, problems: [], steps: ids.size };
}

const App = {
  async Overview() {
    await latency(120);
    failIfError();
    const all = [...b.events.values()].flat().sort((x, y) => y.pos - x.pos);
    return {
      version: '0.1.0-dev',
      dataDir: '/home/ada/.local/share/ducklm',
      databasePath: '/home/ada/.local/share/ducklm/ducklm.db',
      schemaVersion: 2,
      latestSchemaVersion: 2,
      counts: { worlds: b.worlds.size, runs: b.runs.size, streams: b.events.size, events: b.pos },
      recentEvents: all.slice(0, 50),
    };
  },
  async Checks() {
    await sleep(state === 'slow-checks' ? 600_000 : 900);
    return [
      { name: 'Data directory', status: 'ok', detail: '/home/ada/.local/share/ducklm is writable' },
      { name: 'Database schema', status: 'ok', detail: 'schema 2 of 2' },
      { name: 'WebKitGTK', status: 'ok', detail: 'libwebkit2gtk-4.1 is installed' },
      params.get('sandbox') === 'off'
        ? { name: 'Sandbox', status: 'fail', detail: 'bubblewrap is not installed; every shell step needs your approval.', fix: 'sudo apt install bubblewrap' }
        : { name: 'Sandbox', status: 'ok', detail: 'bubblewrap 0.11 works' },
    ];
  },
  async Runs() {
    await latency();
    failIfError();
    return runSummaries();
  },
  async Models() {
    await latency(300);
    failIfError();
    return b.opts.ollama
      ? { host: 'http://127.0.0.1:11434', reachable: true, models: ['llama3.1:8b', 'qwen2.5-coder:7b', 'nomic-embed-text'], sandboxed: b.opts.sandboxed }
      : { host: 'http://127.0.0.1:11434', reachable: false, error: 'Ollama is not running at http://127.0.0.1:11434', models: [], sandboxed: b.opts.sandboxed };
  },
  async Approvals() {
    await latency();
    return b.approvals();
  },
  async RunDetail(runId: string) {
    await latency();
    const run = b.runs.get(runId);
    if (!run) throw `there is no run ${runId}`;
    return { run: { ...run }, state: structuredClone(b.taskState(runId)) ?? null, approvals: b.approvals(runId) };
  },
  async RunAtCheckpoint(checkpointId: string) {
    await latency();
    const cp = b.checkpoints.get(checkpointId);
    if (!cp) throw `there is no checkpoint ${checkpointId}`;
    // The preview keeps no history of a task's plan: its state now stands for the state then.
    return structuredClone(b.taskState(String(cp.runId))) ?? null;
  },
  async Answer(input: unknown) {
    await latency(200);
    b.answer(input);
    return null;
  },
  async CancelRun(runId: string) {
    const run = b.runs.get(runId);
    if (!run) throw `there is no run ${runId}`;
    run.status = 'terminated';
    const st = b.taskState(runId);
    if (st) st.status = 'terminated';
    b.append(runId, 'run.cancelled', { reason: 'cancelled from the window' });
    return null;
  },
  async ResumeRun() {
    return null;
  },
  async SubmitTask(input: { task: string; plan: string; approvalMode: string }) {
    await latency(200);
    const plan = input.plan ? JSON.parse(input.plan) : undefined;
    const run = b.taskRun(input.task || 'explicit plan', plan ? 'awaiting' : 'thinking', Date.now(), plan);
    return { ...run };
  },
  async ValidatePlan(text: string) {
    await latency(60);
    return validatePlan(text);
  },
  async ToolCatalog() {
    return TOOLS;
  },
  RiskRules() {
    return Promise.resolve(RULES);
  },
  async ChooseFolder() {
    await latency(400);
    return '/home/ada/projects/demo';
  },
  async Lineage() {
    await latency(150);
    return b.lineage();
  },
  WorldExamples() {
    return Promise.resolve([{ name: 'branching_grid', source: GRID_SOURCE }]);
  },
  async CreateWorld(input: unknown) {
    await latency(250);
    return b.createWorld(input);
  },
  async RunWorld(input: { runId: string; action: string; steps: number }) {
    await latency(120);
    let out = b.stepWorld(input.runId, input.action);
    const emitted = [...out.emitted];
    for (let i = 1; i < input.steps && !out.done; i++) {
      out = b.stepWorld(input.runId, input.action);
      emitted.push(...out.emitted);
    }
    return { ...out, emitted };
  },
  async WorldDetail(runId: string) {
    await latency();
    const run = b.runs.get(runId);
    if (!run) throw `there is no run ${runId}`;
    const world = b.worlds.get(run.worldId);
    const runs = [...b.runs.values()].filter((r) => r.worldId === world.id);
    const checkpoints = [...b.checkpoints.values()].filter((c) => c.runId === runId).map(({ state: _s, ...c }) => c);
    const fork = world.forkId ? b.forks.get(world.forkId) : undefined;
    const st = world.domain === 'simulated' ? structuredClone(b.states.get(runId) ?? { note: 'a made-up world without state' }) : undefined;
    return { world, run: { ...run }, runs, checkpoints, ...(fork ? { fork } : {}), ...(st !== undefined ? { state: st, program: b.programs.get(world.id) ?? GRID_SOURCE } : {}) };
  },
  async CheckpointWorld(runId: string) {
    await latency();
    return b.checkpoint(runId);
  },
  async Fork(input: unknown) {
    await latency(200);
    return b.fork(input);
  },
  async History(runId: string, offset: number, limit: number) {
    await latency();
    const all = b.history(runId);
    return { total: all.length, offset, events: all.slice(offset, offset + limit), inherited: b.inheritedCount(runId) };
  },
  async Diff(a: string, c: string) {
    await latency(150);
    return b.diff(a, c);
  },
  async Verify(runId: string) {
    await latency(600);
    return { runId, events: b.history(runId).length, steps: b.runs.get(runId)?.worldLocalTime ?? 0, checkpoints: 1, ok: true };
  },
};
void LIMITS;

Object.assign(window, {
  go: { app: { App } },
  runtime: {
    EventsOnMultiple(name: string, cb: (...data: unknown[]) => void) {
      return b.on(name, cb);
    },
    async ClipboardSetText(text: string) {
      await navigator.clipboard?.writeText(text);
      return true;
    },
  },
});

// Screenshots and quick looks address seeded runs by alias: #/runs/@awaiting,
// #/runs/@thinking, #/worlds/@grid, #/worlds/@calm, #/timeline/@calm.
const aliases: Record<string, string | undefined> = {};
for (const r of runSummaries()) {
  if (r.run.status === 'awaiting_approval') aliases['@awaiting'] ??= r.run.id;
  if (r.run.status === 'running') aliases['@thinking'] ??= r.run.id;
  if (r.run.status === 'completed') aliases['@completed'] ??= r.run.id;
}
for (const w of b.worlds.values()) {
  const run = [...b.runs.values()].find((r) => r.worldId === w.id);
  if (w.name === 'branching_grid') aliases['@grid'] ??= run?.id;
  if (w.name === 'grid / calm') aliases['@calm'] ??= run?.id;
  if (w.name === 'grid / detour') aliases['@detour'] ??= run?.id;
}
const resolved = location.hash.replace(/@[a-z]+/g, (a) => aliases[a] ?? a);
if (resolved !== location.hash) history.replaceState(null, '', resolved);

await import('../src/main');
