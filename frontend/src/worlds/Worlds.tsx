import { useEffect, useState } from 'react';
import { type DucklmApi, type Example, toBridgeError } from '../bridge';
import { ImportButton } from '../bundles/BundleButtons';
import { lineOf, sentence, worldRunState } from '../lib/format';
import { shortId } from '../lib/ids';
import { href } from '../lib/route';
import { formatRelative } from '../lib/time';
import { CodeEditor } from '../ui/CodeEditor';
import { WorldRunBadge } from '../ui/StatusBadge';
import { useDebounced } from '../ui/useDebounced';
import { useLoad, useThrottled } from '../ui/useLoad';
import { useRelativeNow } from '../ui/useNow';
import { navigate } from '../ui/useRoute';
import { BranchesNote } from './BranchesNote';
import { useWorldList } from './useWorldList';
import './worlds.css';

/** A minimal world program, for "write your own". */
export const STARTER_PROGRAM = `# A world program: init(seed) returns the first state,
# step(state, action, rng) returns (state, events, done),
# observe(state, role) returns what a role sees.

def init(seed):
    return {"count": 0, "params": {"limit": 10}}

def step(state, action, rng):
    state["count"] += 1
    done = state["count"] >= state["params"]["limit"]
    return state, [{"type": "ticked", "count": state["count"]}], done

def observe(state, role):
    return state
`;

type Create = { busy: boolean; error?: string; line?: number | undefined };

/** Worlds opens a shipped example or a program written here, and lists the simulated worlds. */
export function Worlds({ api }: { api: DucklmApi }) {
  const [examples] = useLoad(() => api.worldExamples(), [api]);
  const [source, setSource] = useState(STARTER_PROGRAM);
  const [name, setName] = useState('');
  const [seed, setSeed] = useState('1');
  const [create, setCreate] = useState<Create>({ busy: false });
  const [search, setSearch] = useState('');
  const text = useDebounced(search.trim(), 200);
  // Deliberation branches (a search records hundreds) are left out unless
  // asked for: the lineage shows them under their rounds.
  const [showBranches, setShowBranches] = useState(false);
  const worlds = useWorldList(api, { domain: 'simulated', text, ...(showBranches ? {} : { withoutBranches: true }), limit: PAGE });
  const now = useRelativeNow(worlds.items.map((w) => w.createdAt));
  // The list follows the ledger: worlds made, forked or stepped elsewhere
  // (the CLI, another screen) show up, at most once a second.
  const refresh = useThrottled(worlds.reload, 1000);
  useEffect(() => api.onLedgerEvents((batch) => batch.some((e) => e.type.startsWith('world.')) && refresh()), [api, refresh]);
  const listed = worlds.status === 'ready' && worlds.items.length > 0;
  useEffect(() => {
    // tests/perf measures how soon the list shows.
    if (listed) performance.mark('worlds:listed', { detail: { total: worlds.total } });
  }, [listed, worlds.total]);

  const seedNum = Number(seed);
  const seedOk = Number.isInteger(seedNum) && seedNum >= 0;

  const run = (input: { program: string; example: string; name: string }) => {
    setCreate({ busy: true });
    api.createWorld({ ...input, seed: seedOk ? seedNum : 0 }).then(
      (c) => navigate({ screen: 'world', runId: c.run.id }),
      (e: unknown) => {
        const message = toBridgeError(e).message;
        setCreate({ busy: false, error: message, line: input.program ? lineOf(message) : undefined });
      },
    );
  };

  const openExample = (ex: Example) => run({ program: '', example: ex.name, name: name.trim() || ex.name });
  const editExample = (ex: Example) => {
    setSource(ex.source);
    setName(ex.name);
    setCreate({ busy: false });
  };

  return (
    <div className="screen worlds">
      <header className="screen-head">
        <h1>Worlds</h1>
        <span className="muted">Deterministic simulated worlds: run them, checkpoint them, fork them and compare the branches.</span>
        <ImportButton api={api} onImported={worlds.reload} />
      </header>
      <div className="worlds-grid">
        <section className="panel" aria-labelledby="start-title">
          <header className="panel-head">
            <h2 id="start-title">Start a world</h2>
          </header>
          <div className="pad stack">
            {examples.status === 'error' && <p className="inline-error">{examples.message}</p>}
            {examples.value?.map((ex) => (
              <div key={ex.name} className="example">
                <div className="min0">
                  <strong>{humanName(ex.name)}</strong>
                  <span className="muted small block ellipsis" title={firstComment(ex.source)}>
                    {firstComment(ex.source)}
                  </span>
                </div>
                <button type="button" className="button primary small" disabled={create.busy} onClick={() => openExample(ex)}>
                  Open {humanName(ex.name)}
                </button>
                <button type="button" className="button small" onClick={() => editExample(ex)}>
                  Edit a copy
                </button>
              </div>
            ))}

            <div className="row wrap">
              <label className="inline-field grow">
                <span>Name</span>
                <input className="input" value={name} onChange={(e) => setName(e.target.value)} placeholder="my world" aria-label="World name" />
              </label>
              <label className="inline-field">
                <span>Seed</span>
                <input className="input num" value={seed} onChange={(e) => setSeed(e.target.value)} aria-label="Seed" aria-invalid={!seedOk} />
              </label>
            </div>
            {!seedOk && <p className="inline-error small">The seed is a whole number from 0.</p>}
            <CodeEditor value={source} onChange={setSource} language="python" label="World program (Starlark)" errorLine={create.line} minHeight={300} />
            {create.error && (
              <p className="inline-error" role="alert" data-testid="create-error">
                {sentence(create.error)}
                {create.line !== undefined && ` Fix line ${create.line} and create again.`}
              </p>
            )}
            <div className="actions">
              <button
                type="button"
                className="button primary"
                disabled={create.busy || !seedOk || source.trim() === ''}
                onClick={() => run({ program: source, example: '', name: name.trim() })}
              >
                {create.busy ? 'Creating…' : 'Create world'}
              </button>
            </div>
          </div>
        </section>

        <section className="panel" aria-labelledby="list-title">
          <header className="panel-head">
            <h2 id="list-title">Simulated worlds</h2>
            <span className="panel-meta" data-testid="world-count">
              {countLine(worlds.items.length, worlds.total, text)}
            </span>
            <button type="button" className="button small" onClick={worlds.reload}>
              Refresh
            </button>
          </header>
          {(search !== '' || worlds.total + worlds.branches >= SEARCH_FROM) && (
            <div className="list-search">
              <input
                className="input"
                type="search"
                value={search}
                onChange={(e) => setSearch(e.target.value)}
                placeholder="Find a world by name or id"
                aria-label="Find a world"
              />
            </div>
          )}
          {worlds.status === 'loading' && (
            <p className="loading pad">
              <span className="spinner" aria-hidden="true" /> Reading worlds…
            </p>
          )}
          {worlds.error && <p className="inline-error pad">{worlds.error}</p>}
          {worlds.status === 'ready' && worlds.total === 0 && (
            <p className="empty">
              {text
                ? `No simulated world’s name or id contains “${text}”.`
                : worlds.branches > 0
                  ? 'Every simulated world here is a deliberation branch.'
                  : 'No simulated worlds yet. Open the Branching Grid to start one.'}
            </p>
          )}
          {worlds.status === 'ready' && (
            <BranchesNote
              shown={showBranches}
              left={worlds.branches}
              text={text}
              testId="branches-note"
              after={
                <>
                  The <a href={href({ screen: 'lineage' })}>Lineage</a> shows them under their rounds.
                </>
              }
              onToggle={() => setShowBranches(!showBranches)}
            />
          )}
          {worlds.items.length > 0 && (
            <ul className="world-list">
              {worlds.items.map((w) => (
                <li key={w.id}>
                  {w.latestRun ? (
                    <a href={href({ screen: 'world', runId: w.latestRun.id })} className="world-item">
                      <span className="ellipsis">{w.name || shortId(w.id)}</span>
                      {w.latestRun.deliberationIndex ? (
                        <span className="badge branch-badge" title={`A branch that deliberation round ${w.latestRun.deliberationIndex} searched`}>
                          branch, round {w.latestRun.deliberationIndex}
                        </span>
                      ) : (
                        w.parent && <span className="badge fork-badge">fork</span>
                      )}
                      {w.forks > 0 && (
                        <span className="muted small" title={`${w.forks} ${w.forks === 1 ? 'world was' : 'worlds were'} forked from this one`}>
                          {forksLine(w.forks, w.branches ?? 0)}
                        </span>
                      )}
                      <WorldRunBadge state={worldRunState(w.latestRun, w.domain)} />
                      <span className="muted small mono world-time">t={w.latestRun.worldLocalTime}</span>
                      <span className="muted small">{formatRelative(w.createdAt, now)}</span>
                    </a>
                  ) : (
                    <span className="world-item muted">{w.name || shortId(w.id)} (no runs)</span>
                  )}
                </li>
              ))}
            </ul>
          )}
          {worlds.hasMore && (
            <div className="pad actions">
              <button type="button" className="button small" disabled={worlds.loadingMore} onClick={worlds.more}>
                {worlds.loadingMore ? 'Reading…' : `Show ${Math.min(PAGE, worlds.total - worlds.items.length)} more`}
              </button>
            </div>
          )}
        </section>
      </div>
    </div>
  );
}

/** Worlds read per page of the list. */
const PAGE = 100;
/** From this many worlds on (branches left out or not), the list has a search box. */
const SEARCH_FROM = 12;

/** countLine says how much of the list is shown: "12 worlds", "100 of 5,000, newest first". */
export function countLine(shown: number, total: number, text: string): string {
  if (total === 0) return '';
  const n = total.toLocaleString('en');
  const what = text ? (total === 1 ? 'match' : 'matches') : total === 1 ? 'world' : 'worlds';
  if (shown < total) return `${shown.toLocaleString('en')} of ${n} ${what}, newest first`;
  return total === 1 ? `1 ${what}` : `${n} ${what}, newest first`;
}

/** forksLine counts a world's forks, its deliberations' branches apart: "2 forks, 600 branches". */
export function forksLine(forks: number, branches: number): string {
  const made = forks - branches;
  const parts = [];
  if (made > 0) parts.push(`${made.toLocaleString('en')} ${made === 1 ? 'fork' : 'forks'}`);
  if (branches > 0) parts.push(`${branches.toLocaleString('en')} ${branches === 1 ? 'branch' : 'branches'}`);
  return parts.join(', ');
}

function humanName(name: string): string {
  return name
    .split(/[_-]+/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join(' ');
}

function firstComment(source: string): string {
  const line = source.split('\n').find((l) => l.startsWith('#'));
  return line ? line.replace(/^#\s*/, '') : '';
}
