import { describe, expect, it } from 'vitest';
import { EXAMPLE_PLAN, checkPlanSyntax, lineColumn } from './plan';

describe('checkPlanSyntax', () => {
  it('accepts the example', () => {
    expect(checkPlanSyntax(EXAMPLE_PLAN).ok).toBe(true);
  });

  it('says where the JSON breaks', () => {
    const r = checkPlanSyntax('{\n  "nodes": [\n    {"id": "a",}\n  ]\n}');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.line).toBe(3);
    expect(r.message).toMatch(/^JSON syntax: .*\(line 3, column \d+\)$/);
  });

  it('wants an object with nodes', () => {
    expect(checkPlanSyntax('[]')).toMatchObject({ ok: false, message: expect.stringContaining('"nodes"') });
    expect(checkPlanSyntax('  ')).toMatchObject({ ok: false, message: expect.stringContaining('empty') });
  });

  it('counts lines and columns from 1', () => {
    expect(lineColumn('ab\ncd', 4)).toEqual({ line: 2, column: 2 });
    expect(lineColumn('ab', 0)).toEqual({ line: 1, column: 1 });
  });
});
