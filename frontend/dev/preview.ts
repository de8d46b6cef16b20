// Development only: `npm run dev`, then open /dev/preview.html to see the
// screens in a plain browser. It stands in for the Wails window (window.go
// and window.runtime) with made-up data. The production build never includes
// this file: vite builds index.html alone.
//
// ?state=empty | error | slow-checks picks a scenario; live events arrive
// every few seconds unless ?live=off.

const params = new URLSearchParams(location.search);
const state = params.get('state') ?? 'full';

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
const id = (kind: string, n: number) => `${kind}_0190f0e3c2a4${hex(n * 2654435761, 20).slice(-20)}`;
const streams = [id('run', 1), id('run', 2), id('wld', 3), id('wld', 4)];
const types = [
  ['run.started', 'external_real', { task: 'Summarise the hostnamectl output', planner: 'llama3.1:8b' }],
  ['plan.validated', 'external_real', { nodes: [{ id: 'step-1', kind: 'tool', tool: 'shell_exec' }] }],
  ['tool.started', 'external_real', { step: 'step-1', tool: 'shell_exec', args: { command: 'hostnamectl' } }],
  ['tool.finished', 'external_real', { step: 'step-1', exitCode: 0, stdout: 'Static hostname: ada-laptop\n Operating System: Debian GNU/Linux 13' }],
  ['world.stepped', 'world_local', { action: { move: 'east' }, observation: { cell: [3, 4], reward: 0.25 } }],
  ['checkpoint.taken', 'world_local', { digest: 'sha256:9f2c1e0b7a64d3', worldLocalTime: 42 }],
  ['approval.requested', 'external_real', { step: 'step-2', reason: 'writes outside the workspace' }],
] as const;

let pos = 0;
const seqs = new Map<string, number>();
function makeEvent(ageMs: number) {
  pos += 1;
  const stream = streams[pos % streams.length]!;
  const seq = (seqs.get(stream) ?? 0) + 1;
  seqs.set(stream, seq);
  const [type, reality, payload] = types[pos % types.length]!;
  return {
    id: id('evt', pos),
    stream,
    seq,
    pos,
    type,
    schemaVersion: 1,
    payload,
    reality,
    recordedAt: new Date(Date.now() - ageMs).toISOString().replace('Z', '417Z'),
    parentTime: reality === 'world_local' ? 12 : 0,
    deliberationIndex: reality === 'world_local' ? 2 : 0,
    worldLocalTime: reality === 'world_local' ? pos : 0,
  };
}

const history = state === 'empty' ? [] : Array.from({ length: 1284 }, (_, i) => makeEvent((1284 - i) * 47_000));
const listeners = new Map<string, Set<(...data: unknown[]) => void>>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Object.assign(window, {
  go: {
    app: {
      App: {
        async Overview() {
          await sleep(120);
          if (state === 'error') {
            throw 'The data directory /home/ada/.local/share/ducklm was written by a newer ducklm (schema 5); this ducklm knows schema 2. Install the newer ducklm, or point DUCKLM_DATA_DIR elsewhere.';
          }
          return {
            version: '0.1.0-dev',
            dataDir: '/home/ada/.local/share/ducklm',
            databasePath: '/home/ada/.local/share/ducklm/ducklm.db',
            schemaVersion: 2,
            latestSchemaVersion: 2,
            counts: state === 'empty' ? { worlds: 0, runs: 0, streams: 0, events: 0 } : { worlds: 6, runs: 23, streams: 29, events: pos },
            recentEvents: history.slice(-50).reverse(),
          };
        },
        async Checks() {
          await sleep(state === 'slow-checks' ? 600_000 : 2500);
          return [
            { name: 'Data directory', status: 'ok', detail: '/home/ada/.local/share/ducklm is writable' },
            { name: 'Database schema', status: 'ok', detail: 'schema 2 of 2' },
            { name: 'WebKitGTK', status: 'ok', detail: 'libwebkit2gtk-4.1 is installed' },
            {
              name: 'Ollama',
              status: 'warn',
              detail: 'Ollama is not reachable at http://127.0.0.1:11434; runs use the offline planner.',
              fix: 'ollama serve',
            },
            {
              name: 'Sandbox',
              status: 'fail',
              detail: 'bubblewrap is not installed; every shell step needs your approval.',
              fix: 'sudo apt install bubblewrap',
            },
          ];
        },
      },
    },
  },
  runtime: {
    EventsOnMultiple(name: string, cb: (...data: unknown[]) => void) {
      const set = listeners.get(name) ?? new Set();
      listeners.set(name, set);
      set.add(cb);
      return () => set.delete(cb);
    },
    async ClipboardSetText(text: string) {
      await navigator.clipboard?.writeText(text);
      return true;
    },
  },
});

if (params.get('live') !== 'off' && state !== 'error') {
  setInterval(() => {
    const batch = [makeEvent(0), makeEvent(0)];
    for (const cb of listeners.get('ledger:events') ?? []) cb(batch);
  }, 4000);
}

await import('../src/main');
