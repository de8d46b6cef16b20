import { type KeyboardEvent, useEffect, useRef, useState } from 'react';
import { type DatabaseTest, type DatabaseView, type DucklmApi, toBridgeError } from '../bridge';
import { sentence } from '../lib/format';
import { useLoad } from '../ui/useLoad';
import { LocalDataPanel, RestartControl } from './LocalData';

interface DatabaseSectionProps {
  api: DucklmApi;
  /** Bring the field into view and focus its address once it is read (#/settings/database). */
  inView?: boolean;
}

/** A connection test: of which address, and what it answered (or why it was refused). */
type Tested = { status: 'testing'; address: string } | { status: 'done'; address: string; result: DatabaseTest } | { status: 'refused'; address: string; message: string };

type Saving = { status: 'saving' } | { status: 'saved'; message: string } | { status: 'failed'; message: string };

/**
 * DatabaseSection is Settings' Database field: where this installation keeps
 * its worlds, runs and ledger — this machine's SQLite file (empty address),
 * or a team's PostgreSQL shared with other installations and workers. The
 * password is typed apart and never shown back; "Test connection" answers
 * with the server's version and schema, or why not; a saved address opens at
 * the next start. DUCKLM_DATABASE_URL (or --database-url) wins, and the
 * field says so.
 */
export function DatabaseSection({ api, inView = false }: DatabaseSectionProps) {
  const [load, reload] = useLoad(() => api.getDatabase(), [api]);
  const [address, setAddress] = useState<string>();
  const [password, setPassword] = useState('');
  const [tested, setTested] = useState<Tested>();
  const [saving, setSaving] = useState<Saving>();
  const testCall = useRef(0);
  // What a save answered is the field's state from then on: no second read,
  // so the password placeholder says "stored" together with the saved note.
  const [fresh, setFresh] = useState<DatabaseView>();
  const view = fresh ?? load.value;

  // The field starts from the stored address once it is read.
  useEffect(() => {
    if (view && address === undefined) setAddress(view.address);
  }, [view, address]);

  // Asked for by its address: once drawn, the field comes into view with its address focused, once.
  const section = useRef<HTMLElement>(null);
  const shown = useRef(false);
  const drawn = view !== undefined && address !== undefined;
  useEffect(() => {
    if (!inView || !drawn || shown.current) return;
    shown.current = true;
    section.current?.scrollIntoView?.({ block: 'start' });
    section.current?.querySelector<HTMLInputElement>('#database-address')?.focus({ preventScroll: true });
  }, [inView, drawn]);

  if (!view || address === undefined) {
    return (
      <section className="panel settings-section" aria-labelledby="set-database">
        <div className="panel-head">
          <h2 id="set-database">Database</h2>
        </div>
        <div className="settings-body">
          {load.status === 'error' ? (
            <div className="row" role="alert">
              <p className="inline-error small grow">The database setting could not be read: {sentence(load.message)}</p>
              <button type="button" className="button small" onClick={reload}>
                Try again
              </button>
            </div>
          ) : (
            <p className="muted small">Reading the database setting…</p>
          )}
        </div>
      </section>
    );
  }

  const input = () => ({ address: address.trim(), password });
  const test = () => {
    const id = ++testCall.current;
    const a = address.trim();
    setTested({ status: 'testing', address: a });
    api.testDatabase(input()).then(
      (result) => id === testCall.current && setTested({ status: 'done', address: a, result }),
      (e: unknown) => id === testCall.current && setTested({ status: 'refused', address: a, message: toBridgeError(e).message }),
    );
  };
  const save = () => {
    setSaving({ status: 'saving' });
    api.saveDatabase(input()).then(
      (r) => {
        setSaving({ status: 'saved', message: r.message });
        setPassword('');
        setAddress(r.database.address);
        setFresh(r.database);
      },
      (e: unknown) => setSaving({ status: 'failed', message: toBridgeError(e).message }),
    );
  };
  // Enter tests the address; it must not submit the settings form around it.
  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      test();
    }
  };
  const edited = address.trim() !== view.address || password !== '';
  const testing = tested?.status === 'testing';

  return (
    <section ref={section} className="panel settings-section database-section" aria-labelledby="set-database">
      <div className="panel-head">
        <h2 id="set-database">Database</h2>
        <span className="panel-meta">
          In use now: <span className="mono" data-testid="database-in-use">{view.inUse}</span>{' '}
          <span className="badge">{view.shared ? 'Shared (PostgreSQL)' : 'This machine (SQLite)'}</span>
        </span>
      </div>
      <div className="settings-body">
        {view.override && <Override view={view} />}
        {view.shared && view.local && (
          <LocalDataPanel
            api={api}
            view={view}
            showRestart={false}
            onSaved={(r) => {
              setAddress(r.database.address);
              setPassword('');
              setFresh(r.database);
            }}
          />
        )}
        <label className="field" htmlFor="database-address">
          <span className="field-label">Address</span>
        </label>
        <input
          id="database-address"
          className="input mono"
          value={address}
          onChange={(e) => {
            setAddress(e.target.value);
            setSaving(undefined);
          }}
          onKeyDown={onKey}
          placeholder="empty: this machine's SQLite database"
          aria-label="Database address"
          aria-describedby="database-help"
          spellCheck={false}
          autoComplete="off"
        />
        <label className="field" htmlFor="database-password">
          <span className="field-label">Password</span>
        </label>
        <div className="row">
          <input
            id="database-password"
            className="input mono grow"
            type="password"
            value={password}
            onChange={(e) => {
              setPassword(e.target.value);
              setSaving(undefined);
            }}
            onKeyDown={onKey}
            placeholder={view.passwordStored ? 'stored; leave empty to keep it' : 'none stored'}
            aria-label="Database password"
            autoComplete="new-password"
          />
          <button type="button" className="button" onClick={test} disabled={testing} aria-label="Test the database connection">
            {testing ? 'Testing…' : 'Test connection'}
          </button>
          <button type="button" className="button primary" onClick={save} disabled={!edited || saving?.status === 'saving'}>
            {saving?.status === 'saving' ? 'Saving…' : 'Use at next start'}
          </button>
        </div>
        <p className="muted small" id="database-help">
          postgres://user@host:5432/database to share worlds, runs and the ledger with a team and its workers (see docs/team-server.md); empty keeps
          them in this machine's SQLite file. The password is kept in the data directory, readable by you alone, and never shown again. A saved
          address opens at the next start: runs in progress stay on the database they began on.
        </p>
        {tested && <TestAnswer tested={tested} now={address.trim()} />}
        {saving?.status === 'saved' && (
          <p className="status-note ok small" role="status" data-testid="database-saved">
            ✓ {sentence(saving.message)}
          </p>
        )}
        {view.nextStart && !view.override && <RestartControl api={api} canRestart={view.canRestart} />}
        {saving?.status === 'failed' && (
          <p className="inline-error small" role="alert" data-testid="database-save-failed">
            Not saved: {sentence(saving.message)}
          </p>
        )}
        {saving?.status !== 'saved' && view.nextStart && !view.override && (
          <p className="inline-warn small" data-testid="database-next-start">
            At the next start ducklm opens <span className="mono">{view.nextStart}</span>.
          </p>
        )}
      </div>
    </section>
  );
}

function Override({ view }: { view: DatabaseView }) {
  return (
    <p className="inline-warn small" data-testid="database-override">
      {view.override} (or --database-url) chooses the database: <span className="mono">{view.overrideAddress}</span>. It wins over this field;
      what you save here applies once it is unset.
    </p>
  );
}

function TestAnswer({ tested, now }: { tested: Tested; now: string }) {
  const stale = tested.address !== now;
  return (
    <div className="database-test" data-testid="database-test" aria-live="polite">
      {tested.status === 'testing' && (
        <p className="muted small row">
          <span className="spinner" aria-hidden="true" /> Connecting to {tested.address ? <span className="mono">{tested.address}</span> : 'the database'}…
        </p>
      )}
      {tested.status === 'refused' && <p className="inline-error small">✗ {sentence(tested.message)}</p>}
      {tested.status === 'done' &&
        (tested.result.ok ? (
          <p className="status-note ok small" data-testid="database-reachable">
            ✓ {sentence(tested.result.message)}
          </p>
        ) : (
          <p className="inline-error small" data-testid="database-unreachable">
            ✗ {sentence(tested.result.message)}
          </p>
        ))}
      {stale && tested.status !== 'testing' && <p className="muted small">That was another address; test again for the one typed now.</p>}
    </div>
  );
}
