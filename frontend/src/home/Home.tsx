import { useEffect } from 'react';
import { type DucklmApi, copyText } from '../bridge';
import { ChecksPanel, isOllamaCheck } from './ChecksPanel';
import { CountTiles } from './CountTiles';
import { ErrorPanel } from './ErrorPanel';
import { EventTable } from './EventTable';
import { LocationPanel } from './LocationPanel';
import { RunsPanel } from './RunsPanel';
import { SystemPanel } from './SystemPanel';
import { TeamLocalData } from './TeamLocalData';
import { useHome } from './useHome';
import './home.css';

interface HomeProps {
  api: DucklmApi;
  /** Told the backend's version once the overview has loaded (the shell shows it). */
  onVersion?: (version: string) => void;
  copy?: (text: string) => Promise<void>;
}

/** Home is the first screen: the runs, where the data is, how much there is, what happened last, and whether this machine, Ollama and the sandbox are ready. */
export function Home({ api, onVersion, copy = copyText }: HomeProps) {
  const { overview, checks, retry, rerunChecks } = useHome(api);
  const version = overview.status === 'ready' ? overview.overview.version : undefined;

  useEffect(() => {
    if (version !== undefined) onVersion?.(version);
  }, [version, onVersion]);

  if (overview.status === 'error') {
    return (
      <div className="home home-error">
        <ErrorPanel message={overview.message} onRetry={retry} />
        {/* When the backend itself is unreachable the checks fail with the same sentence. */}
        {!(checks.status === 'error' && checks.message === overview.message) && (
          <ChecksPanel state={checks} onRerun={rerunChecks} />
        )}
      </div>
    );
  }

  if (overview.status === 'loading') {
    return (
      <div className="home home-loading" aria-busy="true">
        <p className="loading">
          <span className="spinner" aria-hidden="true" /> Opening the ledger…
        </p>
        <ChecksPanel state={checks} onRerun={rerunChecks} />
      </div>
    );
  }

  const { overview: o, feed } = overview;
  return (
    <div className="home">
      <TeamLocalData api={api} />
      <div className="home-top">
        <LocationPanel overview={o} copy={copy} />
        <CountTiles counts={o.counts} events={feed.total} />
      </div>
      <div className="home-main">
        <div className="home-col">
          <RunsPanel api={api} />
          <EventTable feed={feed} />
        </div>
        <div className="home-col home-side">
          <SystemPanel api={api} />
          {/* Models and sandbox says whether Ollama answers, with its fix: the checks do not say it again. */}
          <ChecksPanel state={checks} onRerun={rerunChecks} omit={isOllamaCheck} />
        </div>
      </div>
    </div>
  );
}
