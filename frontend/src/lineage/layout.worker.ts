// Lays a large lineage out off the main thread, so the window keeps drawing
// its progress while dagre works. Input and output are plain data.
import { layoutDag } from '../lib/layout';
import type { LayoutRequest, LayoutReply } from './useLayout';

const ctx = self as unknown as { onmessage: ((e: MessageEvent<LayoutRequest>) => void) | null; postMessage(m: LayoutReply): void };

ctx.onmessage = (e) => {
  const { nodes, edges, options } = e.data;
  try {
    const l = layoutDag(nodes, edges, options);
    const reply: LayoutReply = { ok: true, nodes: [...l.nodes], edges: [...l.edges].map(([k, v]) => [k, [...v]]), width: l.width, height: l.height, ms: l.ms, engine: l.engine };
    ctx.postMessage(reply);
  } catch (err) {
    const reply: LayoutReply = { ok: false, error: err instanceof Error ? err.message : String(err) };
    ctx.postMessage(reply);
  }
};
