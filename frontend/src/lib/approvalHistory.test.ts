import { describe, expect, it } from 'vitest';
import { event } from '../test/fixtures';
import { approvalHistory, byWhom } from './approvalHistory';

const asked = (step: string, requestId: string, args: unknown) =>
  event({ seq: 1, pos: 1, type: 'step.approval_requested', recordedAt: '2026-12-01T10:00:00Z', payload: { requestId, step, args, rule: 'file_write', risk: 'medium' } });

describe('approvalHistory', () => {
  it('pairs each request of a step with its answer: edited arguments, who, when, why', () => {
    const events = [
      asked('s1', 'apr_1', { path: 'a.txt', content: 'A' }),
      asked('other', 'apr_2', { command: 'ls' }),
      event({ seq: 2, pos: 2, type: 'step.approved', recordedAt: '2026-12-01T10:01:00Z', payload: { requestId: 'apr_1', step: 's1', args: { path: 'a.txt', content: 'B' }, by: 'cli', network: false } }),
      // A retried answer is the same answer.
      event({ seq: 3, pos: 3, type: 'step.approved', recordedAt: '2026-12-01T10:02:00Z', payload: { requestId: 'apr_1', step: 's1', by: 'ui' } }),
      asked('s1', 'apr_3', { path: 'a.txt', content: 'C' }),
      event({ seq: 5, pos: 5, type: 'step.denied', recordedAt: '2026-12-01T10:03:00Z', payload: { requestId: 'apr_3', step: 's1', reason: 'not C', by: 'ui' } }),
    ];
    expect(approvalHistory(events, 's1')).toEqual([
      {
        requestId: 'apr_1',
        askedAt: '2026-12-01T10:00:00Z',
        args: { path: 'a.txt', content: 'A' },
        rule: 'file_write',
        risk: 'medium',
        answer: { approved: true, at: '2026-12-01T10:01:00Z', by: 'the CLI', editedArgs: { path: 'a.txt', content: 'B' }, reason: undefined, network: false },
      },
      {
        requestId: 'apr_3',
        askedAt: '2026-12-01T10:00:00Z',
        args: { path: 'a.txt', content: 'C' },
        rule: 'file_write',
        risk: 'medium',
        answer: { approved: false, at: '2026-12-01T10:03:00Z', by: 'the window', reason: 'not C', network: false },
      },
    ]);
  });

  it('marks what a fork inherited: the parent run asked and answered it, before the fork', () => {
    const parent = 'run_parent';
    const events = [
      { ...asked('c', 'apr_1', { command: 'echo two' }), stream: parent },
      event({ seq: 2, pos: 2, stream: parent, type: 'step.denied', recordedAt: '2026-12-01T10:03:00Z', payload: { requestId: 'apr_1', step: 'c', reason: 'not two', by: 'ui' } }),
      { ...asked('c', 'apr_2', { command: 'echo three' }), stream: 'run_child', seq: 1, pos: 3 },
    ];
    const h = approvalHistory(events, 'c', 'run_child');
    expect(h.map((e) => [e.requestId, e.inheritedFrom])).toEqual([
      ['apr_1', parent],
      ['apr_2', undefined],
    ]);
    expect(approvalHistory(events, 'c').every((e) => e.inheritedFrom === undefined), 'without the run, nothing is marked').toBe(true);
  });

  it('names who answered', () => {
    expect([byWhom('ui'), byWhom('cli'), byWhom('test'), byWhom(undefined)]).toEqual(['the window', 'the CLI', 'test', 'unknown']);
  });
});
