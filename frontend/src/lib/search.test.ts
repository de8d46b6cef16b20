import { describe, expect, it } from 'vitest';
import type { StepRecord } from '../bridge';
import { actionText, searchOf } from './search';

function step(tool: string, output: unknown): StepRecord {
  return {
    node: { id: 'search', kind: 'tool', tool, args: {}, depends_on: [] },
    state: 'done',
    attempts: 1,
    approved: false,
    network: false,
    result: { step: 'search', attempt: 1, ok: true, exitCode: 0, timedOut: false, truncated: false, durationMs: 5, sandboxed: true, output },
  } as unknown as StepRecord;
}

describe('searchOf', () => {
  it('reads the world, the choice and the line of a world_search step', () => {
    const s = searchOf(step('world_search', { world: 'wld_a', run: 'run_a', deliberationIndex: 2, chosen: 'E', line: ['E', { go: 'S' }], act: true }));
    expect(s).toEqual({ world: 'wld_a', run: 'run_a', deliberationIndex: 2, chosen: 'E', line: ['E', { go: 'S' }], act: true });
    expect(s!.line.map(actionText)).toEqual(['E', '{"go":"S"}']);
  });

  it('is undefined for other steps and for a search without a result', () => {
    expect(searchOf(undefined)).toBeUndefined();
    expect(searchOf(step('world_sim', { world: 'wld_a', run: 'run_a' }))).toBeUndefined();
    expect(searchOf(step('world_search', undefined))).toBeUndefined();
    expect(searchOf(step('world_search', 'text'))).toBeUndefined();
    expect(searchOf(step('world_search', { world: '', run: 'run_a' }))).toBeUndefined();
  });

  it('reads an old search without line or act as taking nothing', () => {
    expect(searchOf(step('world_search', { world: 'wld_a', run: 'run_a', chosen: 'N' }))).toMatchObject({ line: [], act: false, deliberationIndex: 0 });
  });
});
