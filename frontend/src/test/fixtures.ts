// Test data shaped like what the Go side sends. Used by tests only.
import type { Check, LedgerEvent, Overview } from '../bridge/types';

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
    counts: { worlds: 3, runs: 7, streams: 10, events: 2 },
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
