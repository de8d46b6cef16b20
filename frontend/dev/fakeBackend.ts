// Development only: an in-memory stand-in for ducklm's Go API, shaped like
// backend/api, so the screens can be looked at in a plain browser. It is
// imported by preview.ts alone and never built into the app.
/* eslint-disable @typescript-eslint/no-explicit-any */

type Json = any;
type Listener = (...data: unknown[]) => void;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let idn = 0;
const hex = (n: number) => (n * 2654435761 >>> 0).toString(16).padStart(8, '0');
export const newId = (kind: string) => `${kind}_0190f0e3c2a47b3d${hex(++idn)}${hex(idn * 7 + 3)}`;
const nowIso = (ms = Date.now()) => new Date(ms).toISOString().replace('Z', '123Z');

export const GRID_SOURCE = `# Branching Grid: an agent walks a 9x9 grid with walls towards a goal.
#
# Moves are noisy: with probability state["params"]["noise"] the rng slips
# the chosen direction to one of the other three. Walls and the edge block a
# move (the agent stays put). Reaching the goal ends the world.

DIRS = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}
ORDER = ["N", "E", "S", "W"]

def init(seed):
    return {
        "size": 9,
        "pos": [0, 0],
        "goal": [8, 8],
        "walls": [
            [2, 0], [2, 1], [2, 2], [2, 3], [2, 4], [2, 5],
            [4, 3], [4, 4], [4, 5], [4, 6], [4, 7], [4, 8],
            [6, 0], [6, 1], [6, 2], [6, 3], [6, 4], [6, 5],
            [7, 5],
        ],
        "params": {"noise": 0.2},
        "steps": 0,
    }

def step(state, action, rng):
    # (shortened in the preview)
    return state, [], False

def observe(state, role):
    return state
`;

const LIMITS = { timeout: 120_000_000_000, memoryBytes: 1 << 30, cpuSeconds: 120, fileBytes: 256 << 20, outputBytes: 1 << 20, processes: 256 };
const TOOLS = [
  { name: 'shell_exec', description: 'Run a shell command in the workspace (sandboxed when bubblewrap is there).', args_schema: { type: 'object' } },
  { name: 'file_read', description: 'Read a file inside the workspace.', args_schema: { type: 'object' } },
  { name: 'file_write', description: 'Write a file inside the workspace.', args_schema: { type: 'object' } },
  { name: 'world_sim', description: 'Fork and run a simulated world.', args_schema: { type: 'object' } },
];
const RULES = [
  { id: 'read_only', level: 'low', description: 'reads only, inside the workspace' },
  { id: 'simulation', level: 'low', description: 'runs a simulated world' },
  { id: 'file_write', level: 'medium', description: 'writes a file in the workspace' },
  { id: 'shell_sandboxed', level: 'medium', description: 'a shell command under the sandbox' },
  { id: 'shell_unsandboxed', level: 'high', description: 'a shell command with no sandbox' },
  { id: 'network', level: 'high', description: 'needs network access' },
  { id: 'destructive', level: 'high', description: 'deletes or overwrites files' },
  { id: 'generated_code', level: 'medium', description: 'runs a script a model wrote' },
];

interface Run {
  id: string;
  worldId: string;
  status: string;
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

export class FakeBackend {
  listeners = new Map<string, Set<Listener>>();
  events = new Map<string, Json[]>();
  pos = 0;
  outbox: Json[] = [];
  worlds = new Map<string, Json>();
  runs = new Map<string, Run>();
  states = new Map<string, Json>(); // task run states and world states by run id
  checkpoints = new Map<string, Json>();
  forks = new Map<string, Json>();
  programs = new Map<string, string>();

  constructor(readonly opts: { ollama: boolean; sandboxed: boolean; bigLineage: number }) {}

  on(name: string, cb: Listener) {
    const set = this.listeners.get(name) ?? new Set();
    this.listeners.set(name, set);
    set.add(cb);
    return () => set.delete(cb);
  }

  emit(name: string, data: unknown) {
    for (const cb of this.listeners.get(name) ?? []) cb(data);
  }

  append(stream: string, type: string, payload: Json, extra: Partial<Json> = {}, ageMs = 0) {
    const list = this.events.get(stream) ?? [];
    this.events.set(stream, list);
    const run = this.runs.get(stream);
    const reality = run && this.worlds.get(run.worldId)?.domain === 'real' ? 'external_real' : 'world_local';
    const e = {
      id: newId('evt'),
      stream,
      seq: list.length + 1,
      pos: ++this.pos,
      type,
      schemaVersion: 1,
      payload,
      reality,
      recordedAt: nowIso(Date.now() - ageMs),
      parentTime: run?.parentTime ?? 0,
      deliberationIndex: run?.deliberationIndex ?? 0,
      worldLocalTime: run?.worldLocalTime ?? 0,
      ...extra,
    };
    list.push(e);
    if (ageMs === 0) {
      if (this.outbox.length === 0) setTimeout(() => this.emit('ledger:events', this.outbox.splice(0)), 150);
      this.outbox.push(e);
    }
    if (run) run.updatedAt = e.recordedAt;
    return e;
  }

  // ---- seeding ----

  seed() {
    const t0 = Date.now();
    this.taskRun('Clean the build folder and list what is left', 'awaiting', t0 - 95_000);
    this.taskRun('Summarise what hostnamectl says about this machine', 'completed', t0 - 3_600_000);
    this.taskRun('Write a helper script that counts TODOs in src/', 'thinking', t0 - 20_000);
    this.taskRun('Back up ~/notes to the workspace', 'failed', t0 - 86_400_000);
    const grid = this.createWorld({ name: 'branching_grid', program: '', example: 'branching_grid', seed: 42 }, t0 - 7_200_000);
    for (let i = 0; i < 6; i++) this.stepWorld(grid.run.id, 'null', true);
    const cp = this.checkpoint(grid.run.id);
    for (let i = 0; i < 4; i++) this.stepWorld(grid.run.id, 'null', true);
    const calm = this.fork({ checkpointId: cp.id, parentRunId: grid.run.id, divergence: 'parameter_change', delta: '{"params":{"noise":0.02}}', seedPolicy: 'inherit', name: 'grid / calm' });
    for (let i = 0; i < 7; i++) this.stepWorld(calm.run.id, 'null', true);
    const detour = this.fork({ checkpointId: cp.id, parentRunId: grid.run.id, divergence: 'state_patch', delta: '{"pos":[0,6]}', seedPolicy: 'derive', name: 'grid / detour' });
    for (let i = 0; i < 3; i++) this.stepWorld(detour.run.id, 'null', true);
    const cp2 = this.checkpoint(calm.run.id);
    this.fork({ checkpointId: cp2.id, parentRunId: calm.run.id, divergence: 'action_override', delta: '{"actions":["S","S"]}', seedPolicy: 'inherit', name: 'grid / calm / south' });
    if (this.opts.bigLineage > 0) this.bigLineage(this.opts.bigLineage);
  }

  bigLineage(n: number) {
    let seed = 7;
    const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const ids: string[] = [];
    const statuses = ['completed', 'running', 'failed', 'paused', 'completed', 'completed'];
    const divs = ['state_patch', 'parameter_change', 'action_override', 'seed_change'];
    for (let i = 0; i < n; i++) {
      const id = `wld_big${String(i).padStart(5, '0')}`;
      const parent = i > 0 && rnd() < 0.9 ? ids[Math.floor(rnd() * ids.length)] : undefined;
      const runId = `run_big${String(i).padStart(5, '0')}`;
      const spec: Json = { id, name: `branch ${i}`, domain: i % 11 === 0 ? 'real' : 'simulated', backend: 'starlark', program: { digest: 'sha256:00', size: 1, mediaType: 'text/x-starlark' }, params: null, seed: i, createdAt: nowIso(Date.now() - (n - i) * 60_000) };
      if (parent) {
        spec.parentWorldId = parent;
        spec.forkId = `frk_big${i}`;
        this.forks.set(spec.forkId, { id: spec.forkId, parentWorldId: parent, parentRunId: `run_big${parent.slice(7)}`, checkpointId: 'cpt_big', childWorldId: id, divergence: divs[i % 4], delta: {}, seedPolicy: 'inherit', createdAt: spec.createdAt });
      }
      this.worlds.set(id, spec);
      this.runs.set(runId, { id: runId, worldId: id, status: statuses[i % statuses.length]!, worldLocalTime: i % 40, parentTime: 0, deliberationIndex: 0, baseSeq: 0, createdAt: spec.createdAt, updatedAt: spec.createdAt });
      ids.push(id);
    }
    this.checkpoints.set('cpt_big', { id: 'cpt_big', worldId: ids[0], runId: 'run_big00000', worldLocalTime: 3, ledgerSeq: 3, blob: { digest: 'sha256:00', size: 1, mediaType: 'application/json' }, createdAt: nowIso() });
  }

  taskRun(task: string, shape: 'awaiting' | 'completed' | 'thinking' | 'failed', startMs: number, plan?: Json) {
    const world = { id: newId('wld'), name: task, domain: 'real', backend: 'task', program: { digest: 'sha256:' + 'ab'.repeat(32), size: task.length, mediaType: 'text/plain' }, params: null, seed: 0, createdAt: nowIso(startMs) };
    this.worlds.set(world.id, world);
    const run: Run = { id: newId('run'), worldId: world.id, status: 'running', worldLocalTime: 0, parentTime: 0, deliberationIndex: 0, baseSeq: 0, createdAt: nowIso(startMs), updatedAt: nowIso(startMs) };
    this.runs.set(run.id, run);
    const age = (ms: number) => Math.max(0, Date.now() - (startMs + ms));
    const request = { task, approvalMode: 'ask_risky', limits: LIMITS, maxSteps: 20, maxReplans: 2, maxRetries: 1, concurrency: 1 };
    const st: Json = { runId: run.id, worldId: world.id, request, status: 'running', steps: {}, planAttempts: 0, replans: 0, ticks: 0, stepsRun: 0, seq: 0 };
    this.states.set(run.id, st);
    this.append(run.id, 'task.received', request, {}, age(0));
    if (shape === 'thinking') {
      this.streamPlanner(run.id, plan);
      return run;
    }
    const nodes = plan?.nodes ?? [
      { id: 'step-1', kind: 'tool', tool: 'shell_exec', title: 'Look at the build folder', args: { command: 'du -sh build && ls build | head' }, depends_on: [] },
      { id: 'step-2', kind: 'tool', tool: 'shell_exec', title: 'Remove the build folder', args: { command: 'rm -rf build' }, depends_on: ['step-1'] },
      { id: 'step-3', kind: 'tool', tool: 'shell_exec', title: 'List what is left', args: { command: 'ls -la' }, depends_on: ['step-2'] },
      { id: 'step-4', kind: 'tool', tool: 'file_write', title: 'Write a report', args: { path: 'report.md', content: '…' }, depends_on: ['step-2'] },
    ];
    this.acceptPlan(run.id, { nodes }, age(2000));
    if (shape === 'completed') {
      for (const n of nodes) this.finishStep(run.id, n.id, true, age(5000));
      st.status = run.status = 'completed';
      st.response = 'The machine is ada-laptop, running Debian GNU/Linux 13 on kernel 6.12; it has been up for 3 days.';
      this.append(run.id, 'run.completed', { response: st.response }, {}, age(9000));
    } else if (shape === 'failed') {
      this.finishStep(run.id, 'step-1', false, age(4000));
      st.status = run.status = 'failed';
      st.error = run.error = 'step-1 exited with code 2; the planner gave up after 2 replans';
      this.append(run.id, 'run.failed', { reason: st.error }, {}, age(6000));
    } else {
      this.finishStep(run.id, 'step-1', true, age(4000));
      this.requestApproval(run.id, 'step-2', 'destructive', 'high', 'the command deletes files (rm -rf)', age(6000));
    }
    return run;
  }

  streamPlanner(runId: string, plan?: Json) {
    const text =
      'The task asks for a helper script. I will first look at the layout of src/ with a read-only listing, then have the coder write a small Python script that walks the tree and counts lines containing TODO, and finally run it in the sandbox. Plan:\n1. list src/ (shell_exec, read-only)\n2. write count_todos.py (coder)\n3. run it (shell_exec)';
    let i = 0;
    const tick = setInterval(() => {
      const chunk = text.slice(i, i + 9);
      i += 9;
      if (chunk) this.emit('run:tokens', [{ runId, text: chunk }]);
      if (i >= text.length) {
        clearInterval(tick);
        setTimeout(() => {
          const nodes = plan?.nodes ?? [
            { id: 'step-1', kind: 'tool', tool: 'shell_exec', title: 'List src/', args: { command: 'find src -maxdepth 2 | head -50' }, depends_on: [] },
            { id: 'step-2', kind: 'coder', title: 'Write count_todos.py', args: { goal: 'count TODO lines per file under src/' }, depends_on: ['step-1'] },
            { id: 'step-3', kind: 'tool', tool: 'shell_exec', title: 'Run the counter', args: { command: 'python3 count_todos.py src' }, depends_on: ['step-2'] },
          ];
          this.acceptPlan(runId, { nodes });
          this.startStep(runId, 'step-1');
          setTimeout(() => {
            this.finishStep(runId, 'step-1', true);
            const st = this.states.get(runId);
            if (!st.steps['step-2']) return;
            st.steps['step-2'].script = { step: 'step-2', language: 'python', blob: { digest: 'sha256:11', size: 300, mediaType: 'text/x-python' }, source: 'import os, sys\n\ncount = 0\nfor root, _, files in os.walk(sys.argv[1]):\n    for f in files:\n        with open(os.path.join(root, f), errors="ignore") as fh:\n            count += sum("TODO" in line for line in fh)\nprint(count)\n', model: 'qwen2.5-coder:7b' };
            this.append(runId, 'coder.script', { step: 'step-2', language: 'python' });
            this.requestApproval(runId, 'step-2', 'generated_code', 'medium', 'it runs a script a model wrote');
          }, 1500);
        }, 600);
      }
    }, 140);
  }

  acceptPlan(runId: string, graph: Json, age = 0) {
    const st = this.states.get(runId);
    st.graph = graph;
    st.planAttempts += 1;
    st.steps = {};
    for (const n of graph.nodes) st.steps[n.id] = { node: { depends_on: [], ...n }, state: 'pending', attempts: 0, approved: false, network: false };
    this.append(runId, 'plan.accepted', { graph, attempt: 1 }, {}, age);
    this.tick(runId);
  }

  tick(runId: string) {
    const st = this.states.get(runId);
    st.ticks += 1;
    this.runs.get(runId)!.worldLocalTime = st.ticks;
  }

  startStep(runId: string, step: string, age = 0) {
    const s = this.states.get(runId).steps[step];
    s.state = 'running';
    s.attempts += 1;
    this.append(runId, 'step.started', { step, attempt: s.attempts, tool: s.node.tool ?? 'coder' }, {}, age);
  }

  finishStep(runId: string, step: string, ok: boolean, age = 0) {
    const st = this.states.get(runId);
    const s = st.steps[step];
    if (!s) return;
    if (s.state !== 'running') this.startStep(runId, step, age);
    s.state = ok ? 'done' : 'failed';
    s.result = {
      step,
      attempt: s.attempts,
      ok,
      exitCode: ok ? 0 : 2,
      timedOut: false,
      truncated: false,
      durationMs: 180 + step.length * 37,
      stdoutTail: ok ? (s.node.args?.command?.startsWith('du') ? '412M\tbuild\nassets\nbundle.js\nbundle.js.map\nindex.html\n' : 'done\n') : '',
      stderrTail: ok ? '' : 'du: cannot access \'/home/ada/notes\': No such file or directory\n',
      filesChanged: s.node.tool === 'file_write' ? [s.node.args.path] : [],
      sandboxed: this.opts.sandboxed,
    };
    if (!ok) s.error = 'exited with code 2';
    this.append(runId, 'step.finished', s.result, {}, age);
    s.critique = { step, score: ok ? 0.86 : 0.1, explanation: ok ? 'The output answers the step: the folder size and its contents are listed.' : 'The command failed; the path does not exist.', source: 'heuristic' };
    this.append(runId, 'critic.scored', s.critique, {}, age);
    this.tick(runId);
    this.checkpointRun(runId, age);
  }

  checkpointRun(runId: string, age = 0) {
    const run = this.runs.get(runId)!;
    const cp = { id: newId('cpt'), worldId: run.worldId, runId, worldLocalTime: run.worldLocalTime, ledgerSeq: (this.events.get(runId)?.length ?? 0) + 1, blob: { digest: 'sha256:' + hex(this.pos).repeat(8), size: 900, mediaType: 'application/json' }, createdAt: nowIso() };
    this.checkpoints.set(cp.id, cp);
    run.latestCheckpointId = cp.id;
    this.append(runId, 'run.checkpoint', { checkpointId: cp.id, digest: cp.blob.digest, size: 900, seq: cp.ledgerSeq - 1 }, {}, age);
  }

  requestApproval(runId: string, step: string, rule: string, risk: string, why: string, age = 0) {
    const st = this.states.get(runId);
    const s = st.steps[step];
    const args = s.script ? { language: s.script.language, script: s.script.source } : s.node.args;
    s.state = 'awaiting_approval';
    s.approval = { requestId: newId('apr'), step, tool: s.node.tool ?? 'coder', args, rule, risk, why, network: false, sandboxed: this.opts.sandboxed, limits: LIMITS };
    st.status = 'awaiting_approval';
    this.runs.get(runId)!.status = 'awaiting_approval';
    this.append(runId, 'step.approval_requested', s.approval, {}, age);
  }

  approvals(runId?: string) {
    const out: Json[] = [];
    for (const [id, st] of this.states) {
      if (runId && id !== runId) continue;
      if (!st.graph) continue;
      for (const n of st.graph.nodes) {
        const s = st.steps[n.id];
        if (s?.approval) out.push({ runId: id, title: s.node.title, inDoubt: false, ...s.approval });
      }
    }
    return out;
  }

  answer(input: Json) {
    const st = this.states.get(input.runId);
    if (!st) throw `there is no run ${input.runId}`;
    const s = Object.values(st.steps).find((x: Json) => x.approval?.requestId === input.requestId) as Json;
    if (!s) throw `run ${input.runId} has no open approval request ${input.requestId} (it was answered or the run moved on)`;
    const run = this.runs.get(input.runId)!;
    s.approval = undefined;
    if (!input.approve) {
      s.state = 'failed';
      s.error = 'denied by the user' + (input.reason ? `: ${input.reason}` : '');
      this.append(input.runId, 'step.denied', { requestId: input.requestId, step: s.node.id, reason: input.reason });
      st.status = run.status = 'failed';
      st.error = run.error = `step ${s.node.id} was denied`;
      this.append(input.runId, 'run.failed', { reason: st.error });
      return;
    }
    if (input.args) {
      try {
        s.approvedArgs = JSON.parse(input.args);
      } catch {
        throw 'the edited arguments are not valid JSON';
      }
    }
    this.append(input.runId, 'step.approved', { requestId: input.requestId, step: s.node.id });
    st.status = run.status = 'running';
    this.startStep(input.runId, s.node.id);
    setTimeout(() => {
      this.finishStep(input.runId, s.node.id, true);
      const rest = st.graph.nodes.filter((n: Json) => st.steps[n.id].state === 'pending');
      for (const n of rest) this.finishStep(input.runId, n.id, true);
      st.status = run.status = 'completed';
      st.response = 'Done: the build folder is gone and report.md lists what is left.';
      this.append(input.runId, 'run.completed', { response: st.response });
    }, 1800);
  }

  // ---- worlds ----

  gridInit(): Json {
    return {
      size: 9,
      pos: [0, 0],
      goal: [8, 8],
      walls: [[2, 0], [2, 1], [2, 2], [2, 3], [2, 4], [2, 5], [4, 3], [4, 4], [4, 5], [4, 6], [4, 7], [4, 8], [6, 0], [6, 1], [6, 2], [6, 3], [6, 4], [6, 5], [7, 5]],
      params: { noise: 0.2 },
      steps: 0,
    };
  }

  createWorld(input: Json, startMs = Date.now()) {
    const program = input.program || (input.example === 'branching_grid' ? GRID_SOURCE : '');
    if (input.example && input.example !== 'branching_grid') throw `there is no example world "${input.example}"`;
    const lines = program.split('\n');
    const bad = lines.findIndex((l: string) => /\boops\b|\bfoo\b/.test(l) && !l.trim().startsWith('#'));
    if (bad >= 0) throw `world program line ${bad + 1}: undefined: ${/\boops\b/.test(lines[bad]) ? 'oops' : 'foo'}`;
    if (!/def\s+init\s*\(/.test(program)) throw 'world program line 1: the program has no init(seed) function';
    const world = { id: newId('wld'), name: input.name || 'world', domain: 'simulated', backend: 'starlark', program: { digest: 'sha256:' + 'cd'.repeat(32), size: program.length, mediaType: 'text/x-starlark' }, params: null, seed: input.seed, createdAt: nowIso(startMs) };
    this.worlds.set(world.id, world);
    this.programs.set(world.id, program);
    const run: Run = { id: newId('run'), worldId: world.id, status: 'running', worldLocalTime: 0, parentTime: 0, deliberationIndex: 0, baseSeq: 0, createdAt: nowIso(startMs), updatedAt: nowIso(startMs) };
    this.runs.set(run.id, run);
    const grid = /"goal"/.test(program);
    this.states.set(run.id, grid ? this.gridInit() : { count: 0, params: { limit: 10 } });
    this.append(run.id, 'world.initialized', { seed: input.seed }, {}, Math.max(0, Date.now() - startMs));
    return { world, run };
  }

  rng = 12345;
  random() {
    this.rng = (this.rng * 16807) % 2147483647;
    return this.rng / 2147483647;
  }

  stepWorld(runId: string, action: string, quiet = false) {
    const run = this.runs.get(runId);
    if (!run) throw `there is no run ${runId}`;
    if (run.status === 'completed') throw `run ${runId} has ended; fork a checkpoint to go on`;
    const st = this.states.get(runId);
    const emitted: Json[] = [];
    let done = false;
    if (Array.isArray(st.pos)) {
      const dirs: Record<string, [number, number]> = { N: [0, -1], E: [1, 0], S: [0, 1], W: [-1, 0] };
      let intended = action && action !== 'null' ? JSON.parse(action) : this.bfs(st);
      if (typeof intended === 'object' && intended) intended = intended.move;
      let dir = intended;
      const slipped = this.random() < st.params.noise;
      if (slipped) dir = ['N', 'E', 'S', 'W'].filter((d) => d !== intended)[Math.floor(this.random() * 3)];
      const [dx, dy] = dirs[dir] ?? [0, 0];
      const [x, y] = st.pos;
      let nx = x + dx;
      let ny = y + dy;
      const blocked = nx < 0 || ny < 0 || nx >= st.size || ny >= st.size || st.walls.some((w: number[]) => w[0] === nx && w[1] === ny);
      if (blocked) [nx, ny] = [x, y];
      st.pos = [nx, ny];
      st.steps += 1;
      emitted.push({ type: 'moved', from: [x, y], to: [nx, ny], intended, direction: dir, slipped, blocked });
      done = nx === st.goal[0] && ny === st.goal[1];
      if (done) emitted.push({ type: 'goal_reached', at: [nx, ny], steps: st.steps });
    } else {
      st.count += 1;
      emitted.push({ type: 'ticked', count: st.count });
      done = st.count >= (st.params?.limit ?? 10);
    }
    run.worldLocalTime += 1;
    this.append(runId, 'world.step', { action: action && action !== 'null' ? JSON.parse(action) : null }, {}, quiet ? 1 : 0);
    for (const e of emitted) this.append(runId, 'world.event', e, {}, quiet ? 1 : 0);
    if (done) {
      run.status = 'completed';
      this.append(runId, 'world.completed', {}, {}, quiet ? 1 : 0);
    }
    return { run: { ...run }, state: structuredClone(st), emitted, done };
  }

  bfs(st: Json): string {
    const key = (x: number, y: number) => `${x},${y}`;
    const seen = new Set(st.walls.map((w: number[]) => key(w[0]!, w[1]!)));
    seen.add(key(st.pos[0], st.pos[1]));
    let frontier: [number, number, string | null][] = [[st.pos[0], st.pos[1], null]];
    const dirs: [string, number, number][] = [['N', 0, -1], ['E', 1, 0], ['S', 0, 1], ['W', -1, 0]];
    while (frontier.length) {
      const next: typeof frontier = [];
      for (const [x, y, first] of frontier) {
        for (const [d, dx, dy] of dirs) {
          const cx = x + dx;
          const cy = y + dy;
          if (cx < 0 || cy < 0 || cx >= st.size || cy >= st.size || seen.has(key(cx, cy))) continue;
          if (cx === st.goal[0] && cy === st.goal[1]) return first ?? d;
          seen.add(key(cx, cy));
          next.push([cx, cy, first ?? d]);
        }
      }
      frontier = next;
    }
    return 'N';
  }

  checkpoint(runId: string) {
    const run = this.runs.get(runId);
    if (!run) throw `there is no run ${runId}`;
    const list = this.events.get(runId) ?? [];
    const cp = { id: newId('cpt'), worldId: run.worldId, runId, worldLocalTime: run.worldLocalTime, ledgerSeq: list.length + 1, blob: { digest: 'sha256:' + hex(this.pos + 5).repeat(8), size: 612, mediaType: 'application/json' }, createdAt: nowIso() };
    this.checkpoints.set(cp.id, { ...cp, state: structuredClone(this.states.get(runId)) });
    run.latestCheckpointId = cp.id;
    this.append(runId, 'world.checkpoint', { checkpointId: cp.id, digest: cp.blob.digest, size: cp.blob.size });
    return cp;
  }

  fork(input: Json) {
    const cp = this.checkpoints.get(input.checkpointId);
    if (!cp) throw `there is no checkpoint ${input.checkpointId}`;
    let delta: Json;
    try {
      delta = JSON.parse(input.delta || '{}');
    } catch {
      throw 'the fork delta is not valid JSON';
    }
    const parentRun = this.runs.get(cp.runId)!;
    const parent = this.worlds.get(parentRun.worldId);
    const f = { id: newId('frk'), parentWorldId: parent.id, parentRunId: parentRun.id, checkpointId: cp.id, childWorldId: '', divergence: input.divergence, delta, seedPolicy: input.seedPolicy, createdAt: nowIso() };
    const world = { ...parent, id: newId('wld'), name: input.name || `${parent.name} / ${input.divergence}`, parentWorldId: parent.id, forkId: f.id, createdAt: f.createdAt, seed: input.seedPolicy === 'inherit' ? parent.seed : Math.floor(this.random() * 1e9) };
    f.childWorldId = world.id;
    this.worlds.set(world.id, world);
    this.forks.set(f.id, f);
    const run: Run = { id: newId('run'), worldId: world.id, status: 'running', worldLocalTime: cp.worldLocalTime, parentTime: cp.worldLocalTime, deliberationIndex: 0, baseRunId: parentRun.id, baseSeq: cp.ledgerSeq, createdAt: f.createdAt, updatedAt: f.createdAt };
    this.runs.set(run.id, run);
    const state = structuredClone(cp.state ?? this.states.get(parentRun.id));
    if (input.divergence === 'state_patch' || input.divergence === 'parameter_change') mergePatch(state, delta);
    this.states.set(run.id, state);
    this.append(run.id, 'world.forked', { forkId: f.id, parentWorldId: parent.id, parentRunId: parentRun.id, checkpointId: cp.id, divergence: input.divergence, delta });
    if (input.divergence === 'action_override') for (const a of delta.actions ?? []) this.stepWorld(run.id, JSON.stringify(a), true);
    return { fork: f, world, run };
  }

  history(runId: string): Json[] {
    const segs: [string, number][] = [];
    let run = this.runs.get(runId);
    if (!run) throw `there is no run ${runId}`;
    segs.push([run.id, Infinity]);
    while (run?.baseRunId) {
      segs.push([run.baseRunId, run.baseSeq]);
      run = this.runs.get(run.baseRunId);
    }
    segs.reverse();
    const out: Json[] = [];
    for (const [stream, to] of segs) out.push(...(this.events.get(stream) ?? []).filter((e) => e.seq <= to));
    return out;
  }

  inheritedCount(runId: string): number {
    return this.history(runId).filter((e) => e.stream !== runId).length;
  }

  lineage() {
    const latest = new Map<string, Run>();
    const count = new Map<string, number>();
    for (const r of this.runs.values()) {
      const l = latest.get(r.worldId);
      if (!l || l.createdAt < r.createdAt) latest.set(r.worldId, r);
      count.set(r.worldId, (count.get(r.worldId) ?? 0) + 1);
    }
    return {
      nodes: [...this.worlds.values()].map((w) => ({ world: w, latestRun: latest.get(w.id), runs: count.get(w.id) ?? 0 })),
      edges: [...this.forks.values()].map((f) => ({ fork: f, at: this.checkpoints.get(f.checkpointId)?.worldLocalTime ?? 0 })),
    };
  }

  diff(a: string, b: string) {
    const ha = this.history(a);
    const hb = this.history(b);
    let shared = 0;
    while (shared < ha.length && shared < hb.length && ha[shared].id === hb[shared].id) shared++;
    const stateA = this.states.get(a) ?? null;
    const stateB = this.states.get(b) ?? null;
    const changes: Json[] = [];
    jsonDiff(stateA, stateB, '', changes);
    const last = shared > 0 ? ha[shared - 1] : undefined;
    return {
      a,
      b,
      sharedEvents: shared,
      ...(last ? { forkPoint: { stream: last.stream, worldId: this.runs.get(last.stream)?.worldId ?? '', toSeq: last.seq } } : {}),
      stateA,
      stateB,
      stateChanges: changes,
      eventsA: ha.slice(shared, shared + 2000),
      eventsB: hb.slice(shared, shared + 2000),
      eventsATotal: ha.length - shared,
      eventsBTotal: hb.length - shared,
    };
  }

  taskState(runId: string) {
    return this.states.get(runId);
  }
}

function mergePatch(target: Json, patch: Json) {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete target[k];
    else if (typeof v === 'object' && !Array.isArray(v) && typeof target[k] === 'object' && target[k] !== null) mergePatch(target[k], v);
    else target[k] = v;
  }
}

function jsonDiff(a: Json, b: Json, path: string, out: Json[]) {
  if (JSON.stringify(a) === JSON.stringify(b)) return;
  const obj = (x: Json) => x !== null && typeof x === 'object' && !Array.isArray(x);
  if (obj(a) && obj(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const p = `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (!(k in a)) out.push({ path: p, kind: 'added', b: b[k] });
      else if (!(k in b)) out.push({ path: p, kind: 'removed', a: a[k] });
      else jsonDiff(a[k], b[k], p, out);
    }
    return;
  }
  out.push({ path, kind: 'changed', a, b });
}

export { LIMITS, RULES, TOOLS, sleep };
