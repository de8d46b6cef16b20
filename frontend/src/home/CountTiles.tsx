import type { Counts } from '../bridge';

interface CountTilesProps {
  counts: Omit<Counts, 'events'>;
  events: number;
}

const number = new Intl.NumberFormat();

/** CountTiles shows how much the ledger holds. */
export function CountTiles({ counts, events }: CountTilesProps) {
  const tiles: [string, number][] = [
    ['Worlds', counts.worlds],
    ['Runs', counts.runs],
    ['Streams', counts.streams],
    ['Events', events],
  ];
  return (
    <section className="counts" aria-label="Ledger counts">
      {tiles.map(([label, value]) => (
        <div className="panel count" key={label}>
          <span className="count-value" data-testid={`count-${label.toLowerCase()}`}>
            {number.format(value)}
          </span>
          <span className="count-label">{label}</span>
        </div>
      ))}
    </section>
  );
}
