import type { Overview } from '../bridge';
import { schemaState } from '../lib/schema';
import { CopyButton } from '../ui/CopyButton';
import './home.css';

interface LocationPanelProps {
  overview: Overview;
  copy: (text: string) => Promise<void>;
}

const SCHEMA_NOTE = {
  current: 'up to date',
  behind: 'older than this ducklm expects',
  ahead: 'written by a newer ducklm',
} as const;

/** LocationPanel says where ducklm keeps its data and which schema it has. */
export function LocationPanel({ overview, copy }: LocationPanelProps) {
  const state = schemaState(overview.schemaVersion, overview.latestSchemaVersion);
  return (
    <section className="panel location" aria-label="Data location">
      <dl className="facts">
        <div className="fact">
          <dt>Data directory</dt>
          <dd>
            <span className="path" title={overview.dataDir}>
              {overview.dataDir}
            </span>
            <CopyButton text={overview.dataDir} what="data directory path" copy={copy} />
          </dd>
        </div>
        <div className="fact">
          <dt>Database</dt>
          <dd>
            <span className="path" title={overview.databasePath}>
              {overview.databasePath}
            </span>
            <CopyButton text={overview.databasePath} what="database file path" copy={copy} />
          </dd>
        </div>
        <div className="fact">
          <dt>Schema</dt>
          <dd>
            <span className={`schema schema-${state}`} data-testid="schema">
              {overview.schemaVersion} of {overview.latestSchemaVersion}
            </span>
            <span className={`schema-note schema-note-${state}`}>{SCHEMA_NOTE[state]}</span>
          </dd>
        </div>
      </dl>
    </section>
  );
}
