import { describe, expect, it } from 'vitest';
import { type Route, fromOpen, href, parseRoute, sectionOf } from './route';

describe('routes', () => {
  const all: Route[] = [
    { screen: 'home' },
    { screen: 'new' },
    { screen: 'run', runId: 'run_01' },
    { screen: 'worlds' },
    { screen: 'world', runId: 'run_02' },
    { screen: 'lineage' },
    { screen: 'lineage', select: 'wld_1' },
    { screen: 'lineage', compare: ['run_a', 'run_b'] },
    { screen: 'lineage', select: 'wld_1', compare: ['run_a', 'run_b'] },
    { screen: 'timeline', runId: 'run_03' },
    { screen: 'timeline', runId: 'run_03', seq: 42 },
    { screen: 'timeline', runId: 'run_03', world: true },
    { screen: 'timeline', runId: 'run_03', seq: 42, world: true },
    { screen: 'memory' },
    { screen: 'workers' },
    { screen: 'settings' },
    { screen: 'settings', section: 'database' },
    { screen: 'settings', section: 'tools' },
  ];

  it.each(all)('round-trips %o', (r) => {
    expect(parseRoute(href(r))).toEqual(r);
  });

  it('reads unknown, empty and broken hashes as home', () => {
    expect(parseRoute('')).toEqual({ screen: 'home' });
    expect(parseRoute('#/nowhere')).toEqual({ screen: 'home' });
    expect(parseRoute('#/runs/')).toEqual({ screen: 'home' });
    expect(parseRoute('#/runs/%E0%A4%A')).toEqual({ screen: 'home' });
    expect(parseRoute('#/timeline/run_1?seq=-3')).toEqual({ screen: 'timeline', runId: 'run_1' });
  });

  it('encodes ids', () => {
    expect(href({ screen: 'run', runId: 'a/b' })).toBe('#/runs/a%2Fb');
    expect(parseRoute('#/runs/a%2Fb')).toEqual({ screen: 'run', runId: 'a/b' });
  });

  it('maps screens to sidebar sections', () => {
    expect(sectionOf({ screen: 'run', runId: 'x' })).toBe('home');
    expect(sectionOf({ screen: 'world', runId: 'x' })).toBe('worlds');
    expect(sectionOf({ screen: 'timeline', runId: 'x' })).toBe('home');
    expect(sectionOf({ screen: 'timeline', runId: 'x', world: true }), "a world's timeline is under Worlds").toBe('worlds');
    expect(sectionOf({ screen: 'lineage' })).toBe('lineage');
    expect(sectionOf({ screen: 'memory' })).toBe('memory');
    expect(sectionOf({ screen: 'settings' })).toBe('settings');
  });

  it('reads the routes `ducklm open` sends', () => {
    expect(fromOpen({ screen: 'home' })).toEqual({ screen: 'home' });
    expect(fromOpen({ screen: 'settings' })).toEqual({ screen: 'settings' });
    expect(fromOpen({ screen: 'settings', section: 'tools' })).toEqual({ screen: 'settings', section: 'tools' });
    expect(fromOpen({ screen: 'workers' })).toEqual({ screen: 'workers' });
    expect(fromOpen({ screen: 'run', runId: 'run_1' })).toEqual({ screen: 'run', runId: 'run_1' });
    expect(fromOpen({ screen: 'world', runId: 'run_2' })).toEqual({ screen: 'world', runId: 'run_2' });
    expect(fromOpen({ screen: 'lineage', select: 'wld_1' })).toEqual({ screen: 'lineage', select: 'wld_1' });
    expect(fromOpen({ screen: 'lineage', compare: ['run_a', 'run_b'] })).toEqual({ screen: 'lineage', compare: ['run_a', 'run_b'] });
    expect(fromOpen({ screen: 'timeline', runId: 'run_3', seq: 7 })).toEqual({ screen: 'timeline', runId: 'run_3', seq: 7 });
    expect(fromOpen({ screen: 'timeline', runId: 'run_3', world: true })).toEqual({ screen: 'timeline', runId: 'run_3', world: true });
    expect(fromOpen({ screen: 'run' })).toEqual({ screen: 'home' });
    expect(fromOpen({ screen: 'elsewhere' })).toEqual({ screen: 'home' });
  });
});
