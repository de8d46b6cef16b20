// Test data shaped like what the Go side sends. Used by tests only.
import type {
  Approval,
  Check,
  Checkpoint,
  LedgerEvent,
  Lineage,
  Limits,
  Overview,
  RunDetail,
  RunState,
  RunSummary,
  StepRecord,
  WorldListItem,
  WorldPage,
  WorldQuery,
  WorldRun,
  WorldSpec,
} from '../bridge/types';

const HEX = '0190f0e3c2a47b3d9e8f00112233';

/** event returns a ledger event; override any field. */
export function event(over: Partial<LedgerEvent> & { seq: number; pos: number }): LedgerEvent {
  return {
    id: `evt_${HEX}${String(over.pos).padStart(4, '0')}`,
    stream: `run_${HEX}aaaa`,
    type: 'run.started',
    schemaVersion: 1,
    payload: { task: 'hostnamectl' },
    reality: 'external_real',
    recordedAt: '2025-03-12T14:03:22.123456Z',
    parentTime: 0,
    deliberationIndex: 0,
    worldLocalTime: 0,
    ...over,
  };
}

/** overview returns an overview; override any field. */
export function overview(over: Partial<Overview> = {}): Overview {
  return {
    version: '0.3.1',
    dataDir: '/home/ada/.local/share/ducklm',
    databasePath: '/home/ada/.local/share/ducklm/ducklm.db',
    schemaVersion: 2,
    latestSchemaVersion: 2,
    counts: { worlds: 3, runs: 7, taskRuns: 5, simulatedWorlds: 1, streams: 10, events: 2 },
    recentEvents: [
      event({ seq: 2, pos: 2, type: 'tool.finished', payload: { exitCode: 0 } }),
      event({ seq: 1, pos: 1, type: 'run.started' }),
    ],
    ...over,
  };
}

/** checks returns a typical set of machine checks. */
export function checks(): Check[] {
  return [
    { name: 'Data directory', status: 'ok', detail: '/home/ada/.local/share/ducklm is writable' },
    {
      name: 'Ollama',
      status: 'warn',
      detail: 'Ollama is not running at http://127.0.0.1:11434',
      fix: 'Start it with `ollama serve`',
    },
    { name: 'Sandbox', status: 'fail', detail: 'bubblewrap is not installed', fix: 'sudo apt install bubblewrap' },
  ];
}

// ---- runs, approvals, worlds ----


/** limits are the Go defaults, with the timeout in nanoseconds as Go sends it. */
export function limits(): Limits {
  return {
    timeout: 120_000_000_000,
    memoryBytes: 1 << 30,
    cpuSeconds: 120,
    fileBytes: 256 << 20,
    outputBytes: 1 << 20,
    processes: 256,
  };
}

/** worldRun returns a run; override any field. */
export function worldRun(over: Partial<WorldRun> = {}): WorldRun {
  return {
    id: `run_${HEX}aaaa`,
    worldId: `wld_${HEX}aaaa`,
    status: 'running',
    worldLocalTime: 3,
    parentTime: 0,
    deliberationIndex: 0,
    baseSeq: 0,
    createdAt: '2025-03-12T14:00:00Z',
    updatedAt: '2025-03-12T14:01:30Z',
    ...over,
  };
}

/** worldSpec returns a simulated world; override any field. */
export function worldSpec(over: Partial<WorldSpec> = {}): WorldSpec {
  return {
    id: `wld_${HEX}aaaa`,
    name: 'branching_grid',
    domain: 'simulated',
    backend: 'starlark',
    program: { digest: 'sha256:' + 'ab'.repeat(32), size: 3100, mediaType: 'text/x-starlark' },
    params: null,
    seed: 42,
    createdAt: '2025-03-12T14:00:00Z',
    ...over,
  };
}

/** checkpoint returns a checkpoint record; override any field. */
export function checkpoint(over: Partial<Checkpoint> = {}): Checkpoint {
  return {
    id: `cpt_${HEX}0001`,
    worldId: `wld_${HEX}aaaa`,
    runId: `run_${HEX}aaaa`,
    worldLocalTime: 3,
    ledgerSeq: 5,
    blob: { digest: 'sha256:' + 'cd'.repeat(32), size: 400, mediaType: 'application/json' },
    createdAt: '2025-03-12T14:01:00Z',
    ...over,
  };
}

/** approval returns an open approval request for a shell step. */
export function approval(over: Partial<Approval> = {}): Approval {
  return {
    runId: `run_${HEX}aaaa`,
    requestId: `apr_${HEX}0001`,
    step: 'step-2',
    title: 'Remove the build folder',
    tool: 'shell_exec',
    args: { command: 'rm -rf build' },
    rule: 'destructive',
    risk: 'high',
    why: 'the command deletes files',
    network: false,
    sandboxed: true,
    inDoubt: false,
    limits: limits(),
    retryOnTimeout: false,
    ...over,
  };
}

function step(id: string, over: Partial<StepRecord> = {}, deps: string[] = []): StepRecord {
  return {
    node: { id, kind: 'tool', tool: 'shell_exec', args: { command: `echo ${id}` }, depends_on: deps },
    state: 'pending',
    attempts: 0,
    approved: false,
    network: false,
    ...over,
  };
}

/** runState returns a three-step run: one done, one waiting for approval, one pending. */
export function runState(over: Partial<RunState> = {}): RunState {
  const a = approval();
  const steps: Record<string, StepRecord> = {
    'step-1': step(
      'step-1',
      {
        state: 'done',
        attempts: 1,
        result: {
          step: 'step-1',
          attempt: 1,
          ok: true,
          exitCode: 0,
          timedOut: false,
          truncated: false,
          durationMs: 41,
          stdoutTail: 'Static hostname: ada-laptop\n',
          stderrTail: 'warning: something minor\n',
          filesChanged: ['notes/host.txt'],
          sandboxed: true,
        },
        critique: { step: 'step-1', score: 0.8, explanation: 'The output names the host.', source: 'heuristic' },
      },
      [],
    ),
    'step-2': step(
      'step-2',
      {
        state: 'awaiting_approval',
        approval: {
          requestId: a.requestId,
          step: 'step-2',
          tool: a.tool,
          args: a.args,
          rule: a.rule,
          risk: a.risk,
          why: a.why,
          network: false,
          sandboxed: true,
          limits: limits(),
        },
      },
      ['step-1'],
    ),
    'step-3': step('step-3', {}, ['step-2']),
  };
  return {
    runId: `run_${HEX}aaaa`,
    worldId: `wld_${HEX}aaaa`,
    request: {
      task: 'Clean the build folder',
      approvalMode: 'ask_risky',
      limits: limits(),
      maxSteps: 20,
      maxReplans: 2,
      maxRetries: 1,
      concurrency: 1,
    },
    status: 'awaiting_approval',
    graph: { nodes: Object.values(steps).map((s) => s.node) },
    steps,
    planAttempts: 1,
    replans: 0,
    ticks: 6,
    stepsRun: 1,
    seq: 12,
    ...over,
  };
}

/** runDetail returns the run view's data for runState(). */
export function runDetail(over: Partial<RunDetail> = {}): RunDetail {
  return {
    run: worldRun({ status: 'awaiting_approval' }),
    state: runState(),
    approvals: [approval()],
    ...over,
  };
}

/** runSummary returns a runs-list row; override any field. */
export function runSummary(over: Partial<RunSummary> = {}): RunSummary {
  return { run: worldRun(), task: 'Clean the build folder', approvals: 0, steps: 3, stepsDone: 1, ...over };
}

/** lineage returns a root world with two forked children. */
export function lineage(): Lineage {
  const root = worldSpec({ id: 'wld_root', name: 'grid' });
  const a = worldSpec({ id: 'wld_a', name: 'grid / noisy', parentWorldId: 'wld_root', forkId: 'frk_a' });
  const b = worldSpec({ id: 'wld_b', name: 'grid / calm', parentWorldId: 'wld_root', forkId: 'frk_b' });
  const fork = (id: string, child: string, divergence: 'state_patch' | 'parameter_change') => ({
    fork: {
      id,
      parentWorldId: 'wld_root',
      parentRunId: 'run_root',
      checkpointId: 'cpt_1',
      childWorldId: child,
      divergence,
      delta: {},
      seedPolicy: 'inherit' as const,
      createdAt: '2025-03-12T14:02:00Z',
    },
    at: 3,
  });
  return {
    nodes: [
      { world: root, latestRun: worldRun({ id: 'run_root', worldId: 'wld_root', status: 'completed' }), runs: 1 },
      { world: a, latestRun: worldRun({ id: 'run_a', worldId: 'wld_a', status: 'running' }), runs: 1 },
      { world: b, latestRun: worldRun({ id: 'run_b', worldId: 'wld_b', status: 'failed' }), runs: 1 },
    ],
    edges: [fork('frk_a', 'wld_a', 'parameter_change'), fork('frk_b', 'wld_b', 'state_patch')],
  };
}

/** worldItems is lineage() as the world list sends it. */
export function worldItems(): WorldListItem[] {
  const l = lineage();
  return l.nodes.map((n) => {
    const e = l.edges.find((x) => x.fork.childWorldId === n.world.id);
    return {
      id: n.world.id,
      name: n.world.name,
      domain: n.world.domain,
      ...(n.world.parentWorldId ? { parent: n.world.parentWorldId } : {}),
      createdAt: n.world.createdAt,
      runs: n.runs,
      forks: l.edges.filter((x) => x.fork.parentWorldId === n.world.id).length,
      ...(n.latestRun ? { latestRun: { id: n.latestRun.id, status: n.latestRun.status, worldLocalTime: n.latestRun.worldLocalTime } } : {}),
      ...(e ? { fork: { id: e.fork.id, divergence: e.fork.divergence, at: e.at } } : {}),
    };
  });
}

/** listWorlds answers ListWorlds over items as the backend does: filters, then pages by a cursor. */
export function listWorlds(items: WorldListItem[]) {
  return (q: WorldQuery): WorldPage => {
    const text = (q.text ?? '').toLowerCase();
    const matched = items.filter(
      (w) =>
        (!q.domain || w.domain === q.domain) &&
        (!q.parent || w.parent === q.parent) &&
        (!text || w.name.toLowerCase().includes(text) || w.id.includes(text)),
    );
    const branch = (w: WorldListItem) => (w.latestRun?.deliberationIndex ?? 0) > 0;
    const all = q.withoutBranches ? matched.filter((w) => !branch(w)) : matched;
    const branches = matched.length - all.length;
    const from = q.after ? Number(q.after) : 0;
    const limit = q.limit ?? 100;
    const page = all.slice(from, from + limit);
    return {
      worlds: page,
      total: all.length,
      ...(branches > 0 ? { branches } : {}),
      ...(from + limit < all.length ? { next: String(from + limit) } : {}),
    };
  };
}
