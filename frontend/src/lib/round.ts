// What a deliberation round's record means, in words: why its search
// stopped, whether the world took its choice, what its scores measure.
import type { DeliberationBudget, DeliberationRound } from '../bridge';
import { formatDuration } from './format';

/** SCORE_MEANING is what every deliberation score is: the world program's own score(state), to maximise. */
export const SCORE_MEANING = 'higher is better; the program’s score()';

/** scoreText is a score with its meaning beside it: "score -26.00 (higher is better; the program’s score())". */
export function scoreText(score: number): string {
  return `score ${score.toFixed(2)} (${SCORE_MEANING})`;
}

/** actionText shows an action as its JSON. */
export function actionText(a: unknown): string {
  return JSON.stringify(a ?? null);
}

/**
 * stopReason says why a round's search ended (Go: deliberation.Budget.Stopped):
 * short for a list, or as a sentence. A cancelled round has no record, so
 * a recorded one stopped for its budget, its time limit, or because it
 * had searched everything within its depth.
 */
export function stopReason(b: DeliberationBudget, depth: number, long = false): string {
  switch (b.stopped) {
    case 'budget':
      return long ? `its budget of ${b.branches.toLocaleString('en')} branches was spent` : 'budget spent';
    case 'time':
      return long ? `its time limit ran out after ${formatDuration(b.wallMs)}` : 'time limit reached';
    case 'exhausted':
      return long ? `nothing was left to search within depth ${depth}` : `searched everything within depth ${depth}`;
    default:
      return b.stopped ?? '';
  }
}

/** spentLine is what a round spent and why it stopped: "104 of 200 branches (searched everything within depth 3)". */
export function spentLine(r: DeliberationRound): string {
  const why = stopReason(r.budget, r.depth);
  return `${r.budget.used.toLocaleString('en')} of ${r.budget.branches.toLocaleString('en')} branches${why ? ` (${why})` : ''}`;
}

/** appliedLine says whether the world took the round's choice: `applied: the world took "E" (t=13)`, or "not applied". */
export function appliedLine(r: DeliberationRound): string {
  const chosen = actionText(r.chosen ?? r.candidates[0]?.action);
  return r.appliedAt ? `applied: the world took ${chosen} (t=${r.appliedAt})` : 'not applied';
}

/** roundLine sums a round up: `beam, 300 of 300 branches (budget spent): chose "E", score -26.00 (higher is better; …)`. */
export function roundLine(r: DeliberationRound): string {
  const best = r.candidates[0];
  const spent = `${r.strategy}, ${spentLine(r)}`;
  if (!best) return `${spent}: no action to choose`;
  const score = best.failed ? 'its branches failed' : scoreText(best.score);
  return `${spent}: chose ${actionText(r.chosen ?? best.action)}, ${score}`;
}
