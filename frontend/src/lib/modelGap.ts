// Whether a described task will find a model to plan it, before it is
// submitted (Go: planner.Offline, planner.Direct).
import type { ModelInfo } from '../bridge';

/**
 * plannedWithoutModel mirrors Go's planner.Direct: a shell one-liner
 * ("$ hostnamectl", "!hostnamectl") or a plan pasted as JSON runs without
 * a model; any other described task needs one.
 */
export function plannedWithoutModel(task: string): boolean {
  const t = task.trimStart();
  return t.startsWith('$ ') || t.startsWith('!') || t.startsWith('{');
}

/**
 * modelGap says why no model would plan a described task now ("Ollama
 * does not answer at …"), or undefined when one answers or it is not known
 * yet. Submitted anyway, such a task waits, paused, until a model answers.
 */
export function modelGap(info: ModelInfo | undefined): string | undefined {
  if (!info) return undefined;
  if (!info.reachable) return `Ollama does not answer at ${info.host}`;
  if (info.models.length === 0) return `Ollama at ${info.host} has no models (pull one with ollama pull)`;
  return undefined;
}
