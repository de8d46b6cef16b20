import { describe, expect, it } from 'vitest';
import { boundsOf, centerOn, cull, fitView, hitTest, toWorld, visibleRect, zoomAt } from './viewport';

describe('viewport', () => {
  it('fits content, never enlarging past 1', () => {
    expect(fitView({ width: 100, height: 50 }, { width: 1000, height: 500 })).toEqual({ k: 1, x: 450, y: 225 });
    const v = fitView({ width: 10_000, height: 1000 }, { width: 1048, height: 548 }, 24);
    expect(v.k).toBeCloseTo(0.1);
    expect(v.x).toBeCloseTo(24);
  });

  it('zooms about a point that stays still', () => {
    const v = zoomAt({ x: 10, y: 20, k: 1 }, 2, { x: 110, y: 120 });
    // world point under (110,120) was (100,100); it is still there.
    expect(100 * v.k + v.x).toBeCloseTo(110);
    expect(100 * v.k + v.y).toBeCloseTo(120);
    expect(zoomAt({ x: 0, y: 0, k: 1 }, 1e6, { x: 0, y: 0 }).k).toBe(2);
  });

  it('centres a box', () => {
    const v = centerOn({ x: 0, y: 0, k: 1 }, { x: 100, y: 100, width: 20, height: 10 }, { width: 400, height: 300 });
    expect(v).toEqual({ k: 1, x: 200 - 110, y: 150 - 105 });
  });

  it('culls to what the view shows', () => {
    const boxes = new Map([
      ['in', { x: 10, y: 10, width: 10, height: 10 }],
      ['out', { x: 5000, y: 10, width: 10, height: 10 }],
      ['hidden', { x: 20, y: 20, width: 10, height: 10 }],
    ]);
    const r = visibleRect({ x: 0, y: 0, k: 1 }, { width: 800, height: 600 }, 0);
    expect(r).toEqual({ x0: 0, y0: 0, x1: 800, y1: 600 });
    expect(cull(boxes, r, new Set(['hidden']))).toEqual(['in']);
    expect(cull(boxes, visibleRect({ x: -4900, y: 0, k: 1 }, { width: 800, height: 600 }, 0))).toEqual(['out']);
  });

  it('bounds points', () => {
    expect(boundsOf([{ x: 1, y: 5 }, { x: 3, y: 2 }])).toEqual({ x: 1, y: 2, width: 2, height: 3 });
  });

  it('maps screen points to the world and finds the box under one', () => {
    const v = { x: 100, y: 50, k: 0.5 };
    expect(toWorld(v, { x: 150, y: 60 })).toEqual({ x: 100, y: 20 });
    const boxes = new Map([
      ['a', { x: 0, y: 0, width: 100, height: 40 }],
      ['b', { x: 80, y: 10, width: 100, height: 40 }],
    ]);
    expect(hitTest(boxes, { x: 10, y: 10 })).toBe('a');
    expect(hitTest(boxes, { x: 90, y: 20 })).toBe('b'); // drawn last, on top
    expect(hitTest(boxes, { x: 90, y: 20 }, new Set(['b']))).toBe('a');
    expect(hitTest(boxes, { x: 500, y: 500 })).toBeUndefined();
  });
});
