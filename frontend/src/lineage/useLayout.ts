import { useEffect, useState } from 'react';
import { type Box, type Layout, type LayoutEdge, type LayoutNode, type LayoutOptions, type Point, forestOf, layoutDag } from '../lib/layout';

export interface LayoutRequest {
  nodes: LayoutNode[];
  edges: LayoutEdge[];
  options: LayoutOptions;
}

export type LayoutReply =
  | { ok: true; nodes: [string, Box][]; edges: [string, Point[]][]; width: number; height: number; ms: number; engine: Layout['engine'] }
  | { ok: false; error: string };

/** Graphs above this many nodes are laid out in a worker when the page can start one. */
export const WORKER_ABOVE = 300;

export type LayoutState = { status: 'idle' } | { status: 'working'; nodes: number } | { status: 'ready'; layout: Layout } | { status: 'error'; message: string };

/**
 * useLayout lays out a graph once per `input` object (callers memoise it on
 * the graph, never on selection). Large graphs that dagre lays out go to a
 * worker so the window can show progress; forests laid out as tidy trees,
 * small graphs, and pages without workers, lay out here. A new layout of a
 * graph already drawn (a fold, a live refresh) keeps the last one on screen
 * until it is ready: the drawing never blinks out.
 */
export function useLayout(input: LayoutRequest | undefined): LayoutState {
  const [state, setState] = useState<LayoutState>({ status: 'idle' });
  useEffect(() => {
    if (!input) {
      setState({ status: 'idle' });
      return;
    }
    let cancelled = false;
    setState((s) => (s.status === 'ready' ? s : { status: 'working', nodes: input.nodes.length }));
    const local = () => {
      try {
        const layout = layoutDag(input.nodes, input.edges, input.options);
        if (!cancelled) setState({ status: 'ready', layout });
      } catch (e) {
        if (!cancelled) setState({ status: 'error', message: `The lineage could not be laid out: ${e instanceof Error ? e.message : String(e)}` });
      }
    };
    // A forest's tidy tree is linear and takes tens of milliseconds even for
    // 5,000 worlds: starting a worker and copying the graph there and back
    // would cost more than it saves. The worker is for dagre.
    const tidy = input.options.forests === 'tree' && forestOf(input.nodes, input.edges) !== undefined;
    if (tidy || input.nodes.length <= WORKER_ABOVE || typeof Worker === 'undefined') {
      // A tick first, so "laying out" is on screen before the work starts.
      const id = setTimeout(local, 0);
      return () => {
        cancelled = true;
        clearTimeout(id);
      };
    }
    let worker: Worker;
    try {
      worker = new Worker(new URL('./layout.worker.ts', import.meta.url), { type: 'module' });
    } catch {
      const id = setTimeout(local, 0);
      return () => {
        cancelled = true;
        clearTimeout(id);
      };
    }
    worker.onmessage = (e: MessageEvent<LayoutReply>) => {
      worker.terminate();
      if (cancelled) return;
      const r = e.data;
      if (r.ok) {
        setState({ status: 'ready', layout: { nodes: new Map(r.nodes), edges: new Map(r.edges), width: r.width, height: r.height, ms: r.ms, engine: r.engine } });
      } else {
        setState({ status: 'error', message: `The lineage could not be laid out: ${r.error}` });
      }
    };
    worker.onerror = () => {
      worker.terminate();
      if (!cancelled) local(); // a webview that refuses module workers still gets a layout
    };
    worker.postMessage(input);
    return () => {
      cancelled = true;
      worker.terminate();
    };
  }, [input]);
  return state;
}
