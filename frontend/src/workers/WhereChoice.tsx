import type { Worker } from '../bridge';
import { freeSlots } from './model';

/**
 * WhereChoice is "Here / On the team's workers" as the world view (a run's
 * steps) and the Deliberate dialog (a round's branches) offer it on a
 * team's database: the choice, disabled with a sentence when no worker is
 * alive, and what the workers alive would do with the work (`then`).
 */
export function WhereChoice({
  what,
  name,
  testId,
  disabled,
  workers,
  onWorkers,
  onChange,
  then,
}: {
  /** what runs there: "steps" or "branches" (the legend and the sentences say it). */
  what: 'steps' | 'branches';
  name: string;
  testId: string;
  disabled: boolean;
  /** workers are the team's workers alive. */
  workers: readonly Worker[];
  /** onWorkers is the choice as it stands (false whenever no worker is alive). */
  onWorkers: boolean;
  onChange: (onWorkers: boolean) => void;
  /** then ends the sentence about the workers alive (after "… free: "). */
  then: string;
}) {
  const slots = workers.reduce((n, w) => n + w.slots, 0);
  const legend = `Run the ${what}`;
  return (
    <fieldset className="field" disabled={disabled}>
      <legend className="field-label">{legend}</legend>
      <div className="segmented" role="radiogroup" aria-label={legend}>
        <label className={!onWorkers ? 'on' : undefined}>
          <input type="radio" name={name} checked={!onWorkers} onChange={() => onChange(false)} /> Here
        </label>
        <label className={onWorkers ? 'on' : undefined}>
          <input type="radio" name={name} checked={onWorkers} disabled={workers.length === 0} onChange={() => onChange(true)} /> On the team's
          workers
        </label>
      </div>
      <p className="muted small" data-testid={testId}>
        {workers.length > 0
          ? `${workers.length} ${workers.length === 1 ? 'worker' : 'workers'} alive, ${freeSlots(workers)} of ${slots} ${slots === 1 ? 'slot' : 'slots'} free: ${then}`
          : `No worker is alive: start one with ducklm worker (see Workers) to run ${what} there.`}
      </p>
    </fieldset>
  );
}
