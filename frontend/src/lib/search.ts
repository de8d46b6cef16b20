// What a task's world_search step found, read from its output: the task's
// simulated world it searched, the action it chose and the line the task
// takes (the router turns the line into world_sim steps).
import type { StepRecord } from '../bridge';

/** SearchSummary is a finished world_search step's result. */
export interface SearchSummary {
  world: string;
  run: string;
  deliberationIndex: number;
  chosen: unknown;
  line: unknown[];
  act: boolean;
}

/** searchOf returns what a world_search step found, or undefined for any other step or one without a result. */
export function searchOf(step: StepRecord | undefined): SearchSummary | undefined {
  if (!step || step.node.tool !== 'world_search') return undefined;
  const o = step.result?.output;
  if (o === null || typeof o !== 'object') return undefined;
  const r = o as Record<string, unknown>;
  if (typeof r.world !== 'string' || typeof r.run !== 'string' || r.world === '' || r.run === '') return undefined;
  return {
    world: r.world,
    run: r.run,
    deliberationIndex: typeof r.deliberationIndex === 'number' ? r.deliberationIndex : 0,
    chosen: r.chosen,
    line: Array.isArray(r.line) ? r.line : [],
    act: r.act === true,
  };
}

/** actionText is an action as people read it: a string bare, anything else as compact JSON. */
export function actionText(a: unknown): string {
  return typeof a === 'string' ? a : JSON.stringify(a);
}
