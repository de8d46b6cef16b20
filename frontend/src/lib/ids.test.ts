import { describe, expect, it } from 'vitest';
import { shortId } from './ids';

describe('shortId', () => {
  it('keeps the kind and the random tail of a ducklm id', () => {
    expect(shortId('run_0190f0e3c2a47b3d9e8f001122334455')).toBe('run_…22334455');
    expect(shortId('wld_0190f0e3c2a47b3d9e8f0011223344ff')).toBe('wld_…223344ff');
  });

  it('leaves short ids alone', () => {
    expect(shortId('run_abc')).toBe('run_abc');
    expect(shortId('run_123456789')).toBe('run_123456789');
    expect(shortId('main')).toBe('main');
    expect(shortId('')).toBe('');
  });

  it('shortens long ids without a kind from both ends', () => {
    expect(shortId('0190f0e3c2a47b3d9e8f001122334455')).toBe('0190f0e3…22334455');
  });
});
