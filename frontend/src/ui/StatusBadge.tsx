import { type WorldRunState, runStatusLabel, stepStateLabel } from '../lib/format';

/** RunStatusBadge shows a run's status as a coloured word. */
export function RunStatusBadge({ status }: { status: string }) {
  return (
    <span className={`badge status status-${status}`} data-status={status}>
      {runStatusLabel(status)}
    </span>
  );
}

/** WorldRunBadge shows a world run's state (see worldRunState): "idle" for an open simulated run that no batch moves. */
export function WorldRunBadge({ state }: { state: WorldRunState }) {
  return (
    <span className={`badge status status-${state.key}`} data-status={state.key} title={state.title}>
      {state.label}
    </span>
  );
}

/** StepStateBadge shows a step's state as a coloured word. */
export function StepStateBadge({ state }: { state: string }) {
  return (
    <span className={`badge status step-${state}`} data-state={state}>
      {stepStateLabel(state)}
    </span>
  );
}

/** RiskBadge shows a risk level. */
export function RiskBadge({ risk }: { risk: string }) {
  return <span className={`badge risk risk-${risk}`}>{risk} risk</span>;
}
