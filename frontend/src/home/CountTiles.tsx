import type { Counts } from '../bridge';
import { formatCount } from '../lib/format';
import './home.css';

interface CountTilesProps {
  counts: Omit<Counts, 'events'>;
  events: number;
}

/** CountTiles shows how much the ledger holds. */
export function CountTiles({ counts, events }: CountTilesProps) {
  // The first two count what the Runs list and the Worlds screen list, so the numbers agree with them.
  const tiles: [string, string, number, string][] = [
    ['Task runs', 'task-runs', counts.taskRuns ?? 0, 'Task runs, as listed under Runs'],
    ['Simulated worlds', 'simulated-worlds', counts.simulatedWorlds ?? 0, 'Simulated worlds, as listed under Worlds'],
    ['Streams', 'streams', counts.streams, `Event streams: one per run (${formatCount(counts.runs)} runs of ${formatCount(counts.worlds)} worlds, task runs included)`],
    ['Events', 'events', events, 'Events in the ledger'],
  ];
  return (
    <section className="counts" aria-label="Ledger counts">
      {tiles.map(([label, id, value, title]) => (
        <div className="panel count" key={label} title={title}>
          <span className="count-value" data-testid={`count-${id}`}>
            {formatCount(value)}
          </span>
          <span className="count-label">{label}</span>
        </div>
      ))}
    </section>
  );
}
