import type { Counts } from '../bridge';
import { formatCount } from '../lib/format';
import './home.css';

interface CountTilesProps {
  counts: Omit<Counts, 'events'>;
  events: number;
}

/** CountTiles shows how much the ledger holds. */
export function CountTiles({ counts, events }: CountTilesProps) {
  // The first two count what the Runs list and the Worlds screen list, so the numbers agree with them;
  // the deliberation branches the Worlds screen leaves out are said apart.
  const branches = counts.deliberationBranches ?? 0;
  const branchNote = branches > 0 ? `and ${formatCount(branches)} deliberation branch${branches === 1 ? '' : 'es'}` : '';
  const tiles: [string, string, number, string, string][] = [
    ['Task runs', 'task-runs', counts.taskRuns ?? 0, 'Task runs, as listed under Runs', ''],
    [
      'Simulated worlds',
      'simulated-worlds',
      counts.simulatedWorlds ?? 0,
      `Simulated worlds, as listed under Worlds${branches > 0 ? `; the ${formatCount(branches)} deliberation branches are drawn under their rounds in Lineage` : ''}`,
      branchNote,
    ],
    ['Streams', 'streams', counts.streams, `Event streams: one per run (${formatCount(counts.runs)} runs of ${formatCount(counts.worlds)} worlds, task runs included)`, ''],
    ['Events', 'events', events, 'Events in the ledger', ''],
  ];
  return (
    <section className="counts" aria-label="Ledger counts">
      {tiles.map(([label, id, value, title, note]) => (
        <div className="panel count" key={label} title={title}>
          <span className="count-value" data-testid={`count-${id}`}>
            {formatCount(value)}
          </span>
          <span className="count-label">{label}</span>
          {note && (
            <span className="count-note" data-testid={`count-${id}-note`}>
              {note}
            </span>
          )}
        </div>
      ))}
    </section>
  );
}
