import { describe, expect, it } from 'vitest';
import { approval } from '../test/fixtures';
import { argsText, commandOf, freshApprovals, notificationOf } from './approvals';

describe('approvals', () => {
  it('finds requests not seen before', () => {
    const a = approval({ requestId: 'apr_1' });
    const b = approval({ requestId: 'apr_2' });
    expect(freshApprovals(new Set(['apr_1']), [a, b])).toEqual([b]);
  });

  it('says what a notification shows', () => {
    expect(notificationOf(approval())).toEqual({
      title: 'ducklm: approval needed (high risk)',
      body: 'Remove the build folder: shell_exec, the command deletes files',
      tag: approval().requestId,
    });
  });

  it('picks the command or the script', () => {
    expect(commandOf({ command: 'rm -rf build' })).toEqual({ label: 'Command', text: 'rm -rf build' });
    expect(commandOf({ language: 'python', script: 'print(1)' })).toEqual({ label: 'Script (python)', text: 'print(1)' });
    expect(commandOf({ path: 'a.txt', content: 'x' })).toEqual({ label: 'Path', text: 'a.txt' });
    expect(commandOf(null)).toBeUndefined();
    expect(argsText({ a: 1 })).toBe('{\n  "a": 1\n}');
    expect(argsText(null)).toBe('');
  });
});
