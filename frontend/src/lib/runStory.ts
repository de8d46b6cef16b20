// What a stopped task run's view says about why it stopped and what to do
// next, from its folded state alone, so the status, the body and the
// offered actions cannot disagree.
import type { RunState, TaskGraph } from '../bridge/types';

/** needsModel says whether the run is paused waiting for a planning model (the backend flags such a pause). */
export function needsModel(state: RunState | null | undefined): boolean {
  return state?.status === 'paused' && state.needsModel === true;
}

/** deniedSteps lists the steps the user said no to, in plan order. */
export function deniedSteps(state: RunState | null | undefined): string[] {
  if (!state) return [];
  const order = (state.graph?.nodes ?? []).map((n) => n.id);
  const ids = Object.keys(state.steps).filter((id) => state.steps[id]?.denied);
  return ids.sort((a, b) => order.indexOf(a) - order.indexOf(b));
}

/** planText is a run's current plan as the fork dialog pre-fills it: {"nodes": [...]}, indented. */
export function planText(graph: TaskGraph | undefined): string {
  return JSON.stringify({ nodes: graph?.nodes ?? [] }, null, 2);
}

/** forkName is the child's default name: distinguishable from the parent's task at a glance. */
export function forkName(task: string): string {
  return `${task.trim() || 'Explicit plan'} (edited plan)`;
}
