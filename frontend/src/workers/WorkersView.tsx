import { useEffect, useRef, useState } from 'react';
import { type DucklmApi, type Worker, type WorkersView as View, copyText, toBridgeError } from '../bridge';
import { sentence } from '../lib/format';
import { href } from '../lib/route';
import { formatAbsolute, formatRelative } from '../lib/time';
import { CopyButton } from '../ui/CopyButton';
import { useRelativeNow } from '../ui/useNow';
import { POLL_MS, STATES, startCommand, summary } from './model';
import './workers.css';

type Loaded = { status: 'loading' } | { status: 'error'; message: string; last?: Received } | { status: 'ready'; view: View; at: Received };

/** A view and the offset of the server's clock from this one's when it arrived. */
interface Received {
  view: View;
  skewMs: number;
}

/**
 * WorkersView is the Workers screen: the team's `ducklm worker` processes —
 * whether each is alive, its last heartbeat, slots and the jobs it runs now
 * — read again every two seconds while the screen is open. On this
 * machine's SQLite database, or with no worker yet, it says how to start one.
 */
export function WorkersView({ api, copy = copyText }: { api: DucklmApi; copy?: (text: string) => Promise<void> }) {
  const [loaded, setLoaded] = useState<Loaded>({ status: 'loading' });
  const last = useRef<Received | undefined>(undefined);

  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = () => {
      api.workers().then(
        (view) => {
          if (!live) return;
          const at = { view, skewMs: Date.parse(view.now) - Date.now() };
          last.current = at;
          setLoaded({ status: 'ready', view, at });
          timer = setTimeout(read, POLL_MS);
        },
        (e: unknown) => {
          if (!live) return;
          const l = last.current;
          setLoaded(l ? { status: 'error', message: toBridgeError(e).message, last: l } : { status: 'error', message: toBridgeError(e).message });
          timer = setTimeout(read, POLL_MS);
        },
      );
    };
    read();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [api]);

  const shown = loaded.status === 'ready' ? loaded.at : loaded.status === 'error' ? loaded.last : undefined;
  const times = shown ? shown.view.workers.map((w) => w.heartbeatAt) : [];
  const localNow = useRelativeNow(times, 1000);
  const now = localNow + (shown?.skewMs ?? 0);

  return (
    <section className="screen workers" aria-labelledby="workers-title">
      <header className="screen-head">
        <h1 id="workers-title">Workers</h1>
        {shown && shown.view.shared && (
          <span className="muted small" data-testid="workers-summary">
            {summary(shown.view)}
          </span>
        )}
      </header>
      {loaded.status === 'loading' && <p className="muted">Reading the team's workers…</p>}
      {loaded.status === 'error' && (
        <p className="inline-error small" role="alert">
          The workers could not be read: {sentence(loaded.message)} Trying again every {POLL_MS / 1000} s.
        </p>
      )}
      {shown && !shown.view.shared && <NotShared copy={copy} />}
      {shown && shown.view.shared && shown.view.workers.length === 0 && <NoWorkers copy={copy} />}
      {shown && shown.view.shared && shown.view.workers.length > 0 && (
        <div className="panel">
          <table className="data-table workers-table" aria-label="Workers">
            <thead>
              <tr>
                <th scope="col">Worker</th>
                <th scope="col">State</th>
                <th scope="col">Last heartbeat</th>
                <th scope="col">Slots</th>
                <th scope="col">Running now</th>
                <th scope="col">Jobs done</th>
              </tr>
            </thead>
            <tbody>
              {shown.view.workers.map((w) => (
                <WorkerRow key={w.id} worker={w} now={now} />
              ))}
            </tbody>
          </table>
          <p className="muted small workers-foot">
            A worker writes its heartbeat every {shown.view.heartbeatMs / 1000} s; one silent for {shown.view.lostAfterMs / 1000} s is lost. Stopped
            and lost workers stay listed for a day.
          </p>
          <p className="muted small workers-foot" data-testid="workers-jobs-note">
            Jobs done counts jobs, not branches: a deliberation sends its branches to the workers in jobs of several, and its round says how many
            branches it ran. A world run on the workers is one job.
          </p>
        </div>
      )}
    </section>
  );
}

function WorkerRow({ worker: w, now }: { worker: Worker; now: number }) {
  const state = STATES[w.state] ?? { label: w.state, alive: false, hint: '' };
  return (
    <tr data-worker={w.id} data-state={w.state}>
      <td>
        <span className="worker-host">{w.host}</span> <span className="muted small">pid {w.pid}</span>{' '}
        <span className="mono muted small block">{w.id}</span> {w.version && <span className="muted small block">ducklm {w.version}</span>}
      </td>
      <td>
        <span className={`worker-state ${state.alive ? 'alive' : 'gone'}`} title={state.hint} data-testid="worker-state">
          {state.alive ? '●' : '○'} {state.label}
        </span>{' '}
        <span className="muted small block">{state.alive ? 'alive' : 'not alive'}</span>
      </td>
      <td title={formatAbsolute(w.heartbeatAt)} data-testid="worker-heartbeat">
        {formatRelative(w.heartbeatAt, now)}
      </td>
      <td className="num">
        {w.jobs.length} of {w.slots} busy
      </td>
      <td>
        {w.jobs.length === 0 ? (
          <span className="muted">—</span>
        ) : (
          <ul className="worker-jobs">
            {w.jobs.map((j) => (
              <li key={j.id} data-testid="worker-job">
                {j.label || j.kind}
                {j.runId && (
                  <>
                    {' '}
                    of{' '}
                    <a className="mono" href={href({ screen: 'run', runId: j.runId })}>
                      {j.runId}
                    </a>
                  </>
                )}
                <span className="muted small"> · since {formatRelative(j.startedAt, now)}</span>
              </li>
            ))}
          </ul>
        )}
      </td>
      <td className="num" data-testid="worker-jobs-done">
        {w.done.toLocaleString('en')}
      </td>
    </tr>
  );
}

function NotShared({ copy }: { copy: (text: string) => Promise<void> }) {
  return (
    <div className="panel empty-panel" data-testid="workers-not-shared">
      <p>
        Workers run deliberation branches for a team that shares one PostgreSQL database. This window keeps its data in this machine's SQLite
        file, so no worker can work for it.
      </p>
      <ol className="small">
        <li>
          Choose the team's database in <a href={href({ screen: 'settings', section: 'database' })}>Settings → Database</a> (or start ducklm with DUCKLM_DATABASE_URL
          set), and start ducklm again.
        </li>
        <li>
          On each machine that should work, run <StartCommand copy={copy} />
        </li>
      </ol>
      <p className="muted small">How to set up the database, and workers as systemd units: docs/team-server.md in ducklm's source.</p>
    </div>
  );
}

function NoWorkers({ copy }: { copy: (text: string) => Promise<void> }) {
  return (
    <div className="panel empty-panel" data-testid="workers-none">
      <p>No worker has joined this database yet. Start one on any machine that reaches it:</p>
      <StartCommand copy={copy} />
      <p className="muted small">
        It appears here within seconds, with its heartbeat and the jobs it runs. More on workers (slots, systemd units): docs/team-server.md in
        ducklm's source.
      </p>
    </div>
  );
}

function StartCommand({ copy }: { copy: (text: string) => Promise<void> }) {
  return (
    <span className="row start-command">
      <code className="mono">{startCommand}</code>
      <CopyButton text={startCommand} what="the command" copy={copy} />
    </span>
  );
}
