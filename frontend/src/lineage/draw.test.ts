import { describe, expect, it } from 'vitest';
import { pathOf } from '../lib/layout';
import { type PathSink, arrowHead, traceEdge } from './draw';

/** A sink that writes what it is told as an SVG path, to compare with pathOf. */
function svgSink(): PathSink & { d: string } {
  const s = {
    d: '',
    moveTo: (x: number, y: number) => void (s.d += `M${x},${y}`),
    lineTo: (x: number, y: number) => void (s.d += `L${x},${y}`),
    quadraticCurveTo: (cx: number, cy: number, x: number, y: number) => void (s.d += `Q${cx},${cy} ${x},${y}`),
  };
  return s;
}

describe('traceEdge', () => {
  it('draws on a canvas the same curve pathOf draws in SVG', () => {
    const cases = [
      [{ x: 0, y: 0 }, { x: 10, y: 0 }],
      [{ x: 0, y: 0 }, { x: 5, y: 5 }, { x: 10, y: 0 }],
      [{ x: 0, y: 0 }, { x: 20, y: 0 }, { x: 20, y: 40 }, { x: 40, y: 40 }],
    ];
    for (const pts of cases) {
      const sink = svgSink();
      traceEdge(sink, pts);
      expect(sink.d).toBe(pathOf(pts));
    }
    const none = svgSink();
    traceEdge(none, [{ x: 1, y: 1 }]);
    expect(none.d).toBe('');
  });
});

describe('arrowHead', () => {
  it('points along the last segment, its tip on the end', () => {
    const head = arrowHead([{ x: 0, y: 0 }, { x: 50, y: 10 }, { x: 100, y: 10 }], 6)!;
    expect(head[0]).toEqual({ x: 100, y: 10 });
    expect(head[1]).toEqual({ x: 94, y: 13 });
    expect(head[2]).toEqual({ x: 94, y: 7 });
    expect(arrowHead([{ x: 1, y: 1 }])).toBeUndefined();
    expect(arrowHead([{ x: 1, y: 1 }, { x: 1, y: 1 }])).toBeUndefined();
  });
});
