// Development only: times the lineage layout (the real buildLineage and
// layoutInput, then layoutDag) on made-up fork forests. Run with `npm run bench:lineage`;
// pass a node count to change the size (default 5000).
import type { Lineage } from '../src/bridge/types';
import { layoutDag } from '../src/lib/layout';
import { buildLineage, layoutInput } from '../src/lib/lineage';

declare const process: { argv: string[] };

const n = Number(process.argv[2] ?? 5000);

function forest(size: number, parentOf: (i: number, rnd: () => number) => number | undefined): Lineage {
  let seed = 7;
  const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const nodes: Lineage['nodes'] = [];
  const edges: Lineage['edges'] = [];
  for (let i = 0; i < size; i++) {
    const id = `wld_${i}`;
    const parent = i > 0 ? parentOf(i, rnd) : undefined;
    nodes.push({
      world: {
        id,
        name: `branch ${i}`,
        domain: 'simulated',
        backend: 'starlark',
        program: { digest: 'sha256:00', size: 1, mediaType: 'text/x-starlark' },
        params: null,
        seed: i,
        createdAt: '2025-03-12T14:00:00Z',
        ...(parent !== undefined ? { parentWorldId: `wld_${parent}`, forkId: `frk_${i}` } : {}),
      },
      runs: 1,
    });
    if (parent !== undefined) {
      edges.push({
        fork: {
          id: `frk_${i}`,
          parentWorldId: `wld_${parent}`,
          parentRunId: `run_${parent}`,
          checkpointId: 'cpt_0',
          childWorldId: id,
          divergence: 'state_patch',
          delta: {},
          seedPolicy: 'inherit',
          createdAt: '2025-03-12T14:00:00Z',
        },
        at: 0,
      });
    }
  }
  return { nodes, edges };
}

const shapes: [string, (i: number, rnd: () => number) => number | undefined][] = [
  ['bushy (90% forked from any earlier world)', (i, rnd) => (rnd() < 0.9 ? Math.floor(rnd() * i) : undefined)],
  ['deep (forked from one of the last 20 worlds)', (i, rnd) => Math.max(0, i - 1 - Math.floor(rnd() * 20))],
  ['many small trees (roots every 25 worlds)', (i, rnd) => (i % 25 === 0 ? undefined : i - 1 - Math.floor(rnd() * (i % 25)))],
];

// The lineage's own layout (tidy trees for a fork forest) and, in the same
// run for a ratio, dagre on the same graph.
for (const [name, parentOf] of shapes) {
  const { nodes, edges, options } = layoutInput(buildLineage(forest(n, parentOf)));
  const times: string[] = [];
  for (const forests of ['tree', 'dagre'] as const) {
    const started = performance.now();
    const l = layoutDag(nodes, edges, { ...options, forests });
    const ms = performance.now() - started;
    times.push(`${l.engine} ${Math.round(ms)} ms (${Math.round(l.width)} × ${Math.round(l.height)} px)`);
  }
  console.log(`${n} worlds, ${name}: ${times.join(', ')}`);
}
