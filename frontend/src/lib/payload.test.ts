import { describe, expect, it } from 'vitest';
import { detailPayload, previewPayload, truncate } from './payload';

describe('previewPayload', () => {
  it('renders compact JSON', () => {
    expect(previewPayload({ a: 1, b: [true, null], c: 'x' })).toBe('{"a":1,"b":[true,null],"c":"x"}');
  });

  it('renders every JSON value', () => {
    expect(previewPayload(null)).toBe('null');
    expect(previewPayload('line one\nline two')).toBe('"line one\\nline two"');
    expect(previewPayload(42)).toBe('42');
    expect(previewPayload([])).toBe('[]');
    expect(previewPayload(undefined)).toBe('');
  });

  it('truncates to the limit with an ellipsis', () => {
    const got = previewPayload({ output: 'x'.repeat(500) }, 40);
    expect(got).toHaveLength(40);
    expect(got.endsWith('…')).toBe(true);
    expect(got.startsWith('{"output":"xxx')).toBe(true);
  });
});

describe('detailPayload', () => {
  it('indents and bounds', () => {
    expect(detailPayload({ a: 1 })).toBe('{\n  "a": 1\n}');
    expect(detailPayload({ a: 'y'.repeat(100) }, 20)).toHaveLength(20);
  });
});

describe('truncate', () => {
  it('keeps short strings and handles tiny limits', () => {
    expect(truncate('abc', 3)).toBe('abc');
    expect(truncate('abcd', 3)).toBe('ab…');
    expect(truncate('abcd', 0)).toBe('');
  });
});
