import { type FormEvent, type ReactNode, useCallback, useEffect, useRef, useState } from 'react';
import { type DucklmApi, type ModelInfo, type ModelRole, type Settings, type SettingsView as View, copyText, toBridgeError } from '../bridge';
import { CopyButton } from '../ui/CopyButton';
import { Opening, OpenFailed } from '../ui/LoadState';
import { type Theme, theme as pageTheme, themeChoice } from '../ui/theme';
import { BUILTIN_EMBEDDER, DEFAULT_MODE, MODES, ROLES, RUN_LOOP, WORLD_MEMORY, byField, normal, roleModels, sameSettings } from './model';
import { DatabaseSection } from './DatabaseSection';
import { ToolsSection } from './ToolsSection';
import { TrustedSignersSection } from './TrustedSigners';
import './settings.css';

interface SettingsViewProps {
  api: DucklmApi;
  /** Copies text to the clipboard (the bridge's by default). */
  copy?: (text: string) => Promise<void>;
  /** How long typing must pause before the backend checks the form. */
  checkDelayMs?: number;
  /** A section to bring into view once it is drawn. */
  section?: 'database' | 'tools';
}

type Loaded = { status: 'loading' } | { status: 'error'; message: string } | { status: 'ready' };

/** A connection test: of which host (as typed; "" is the default host), and what it found. */
type Test =
  | { status: 'idle' }
  | { status: 'testing'; host: string }
  | { status: 'done'; host: string; info: ModelInfo }
  | { status: 'refused'; host: string; message: string };

type Note = { kind: 'saved'; host: string } | { kind: 'failed'; message: string } | undefined;

const THEMES: readonly { id: Theme; label: string }[] = [
  { id: 'system', label: 'System' },
  { id: 'light', label: 'Light' },
  { id: 'dark', label: 'Dark' },
];

/**
 * SettingsView edits the stored preferences: the Ollama host (tested before
 * it is saved, and in use as soon as it is), the default model per role, the
 * default approval mode, the theme (previewed while editing) and the memory
 * limit of world programs. It shows the
 * data directory, the database (this machine's SQLite or a team's
 * PostgreSQL: DatabaseSection, saved apart, for the next start), and the signers whose bundles it trusts (kept in
 * trusted_keys, not in the form: stopping trust in one applies at once).
 * The backend checks the form as it is typed, with the sentences it would
 * refuse a save with.
 */
/** TASK_STEPS are the choices of where portable task steps run (settings.go's taskSteps). */
const TASK_STEPS: { id: 'workers' | 'here'; label: string }[] = [
  { id: 'workers', label: "On the team's workers" },
  { id: 'here', label: 'Here' },
];

export function SettingsView({ api, copy = copyText, checkDelayMs = 250, section }: SettingsViewProps) {
  const [loaded, setLoaded] = useState<Loaded>({ status: 'loading' });
  const [view, setView] = useState<View>();
  const [saved, setSaved] = useState<Settings>();
  const [form, setForm] = useState<Settings>();
  const [problems, setProblems] = useState<Record<string, string>>({});
  const [checking, setChecking] = useState(false);
  const [test, setTest] = useState<Test>({ status: 'idle' });
  const [saving, setSaving] = useState(false);
  const [note, setNote] = useState<Note>();
  const [attempt, setAttempt] = useState(0);
  const testCall = useRef(0);

  const runTest = useCallback(
    (host: string, defaultHost: string) => {
      const id = ++testCall.current;
      setTest({ status: 'testing', host });
      api.testOllama(host.trim() === '' ? defaultHost : host.trim()).then(
        (info) => id === testCall.current && setTest({ status: 'done', host, info }),
        (e: unknown) => id === testCall.current && setTest({ status: 'refused', host, message: toBridgeError(e).message }),
      );
    },
    [api],
  );

  // Load, then test the stored host at once so the model lists are filled.
  useEffect(() => {
    let live = true;
    setLoaded({ status: 'loading' });
    api.getSettings().then(
      (v) => {
        if (!live) return;
        setView(v);
        setSaved(v.settings);
        setForm(v.settings);
        setLoaded({ status: 'ready' });
        runTest(v.settings.ollamaHost, v.defaultHost);
      },
      (e: unknown) => live && setLoaded({ status: 'error', message: toBridgeError(e).message }),
    );
    return () => {
      live = false;
    };
  }, [api, runTest, attempt]);

  const dirty = form !== undefined && saved !== undefined && !sameSettings(form, saved);

  // The backend checks what is typed, shortly after typing stops.
  useEffect(() => {
    if (!form || !dirty) {
      setProblems({});
      setChecking(false);
      return;
    }
    let live = true;
    setChecking(true);
    const id = setTimeout(() => {
      api.checkSettings(normal(form)).then(
        (c) => {
          if (!live) return;
          setProblems(byField(c.problems));
          setChecking(false);
        },
        (e: unknown) => {
          if (!live) return;
          setProblems({ form: toBridgeError(e).message });
          setChecking(false);
        },
      );
    }, checkDelayMs);
    return () => {
      live = false;
      clearTimeout(id);
    };
  }, [api, form, dirty, checkDelayMs]);

  // The theme previews while it is edited; leaving without saving shows the stored one again.
  const savedTheme = useRef<Theme>('system');
  savedTheme.current = themeChoice(saved?.theme);
  const formTheme = form ? themeChoice(form.theme) : undefined;
  useEffect(() => {
    if (formTheme) pageTheme().set(formTheme);
  }, [formTheme]);
  useEffect(() => () => pageTheme().set(savedTheme.current), []);

  if (loaded.status === 'loading') return <Opening what="the settings" />;
  if (loaded.status === 'error' || !view || !saved || !form) {
    return (
      <OpenFailed
        title="The settings could not be opened"
        message={loaded.status === 'error' ? loaded.message : 'The settings did not load.'}
        onRetry={() => setAttempt((n) => n + 1)}
        backHref="#/"
        backLabel="Back to runs"
      />
    );
  }

  const edit = (change: Partial<Settings>) => {
    setNote(undefined);
    setForm((f) => (f ? { ...f, ...change } : f));
  };
  const setModel = (role: ModelRole, model: string) => {
    setNote(undefined);
    setForm((f) => (f ? { ...f, models: { ...f.models, [role]: model } } : f));
  };

  const hasProblems = Object.keys(problems).length > 0;
  const canSave = dirty && !hasProblems && !saving;

  const save = (e: FormEvent) => {
    e.preventDefault();
    if (!canSave) return;
    setSaving(true);
    setNote(undefined);
    api.saveSettings(normal(form)).then(
      (r) => {
        setSaving(false);
        setSaved(r.settings);
        setForm(r.settings);
        setView((v) => (v ? { ...v, settings: r.settings, ollamaHost: r.ollamaHost } : v));
        setNote({ kind: 'saved', host: r.ollamaHost });
      },
      (err: unknown) => {
        setSaving(false);
        setNote({ kind: 'failed', message: toBridgeError(err).message });
      },
    );
  };

  const revert = () => {
    setNote(undefined);
    setForm(saved);
  };

  // The model lists come from the last test of the host now in the field.
  const hostNow = form.ollamaHost.trim();
  const tested = test.status === 'done' && test.host.trim() === hostNow ? test.info : undefined;
  const listed = tested?.reachable ? tested.models : undefined;
  const testing = test.status === 'testing' && test.host.trim() === hostNow;

  return (
    <form className="screen settings" onSubmit={save} aria-labelledby="settings-title" noValidate>
      <header className="screen-head">
        <h1 id="settings-title">Settings</h1>
      </header>

      <section className="panel settings-section" aria-labelledby="set-ollama">
        <div className="panel-head">
          <h2 id="set-ollama">Ollama</h2>
          <span className="panel-meta">
            In use now: <span className="mono" data-testid="host-in-use">{view.ollamaHost}</span>
          </span>
        </div>
        <div className="settings-body">
          <label className="field" htmlFor="ollama-host">
            <span className="field-label">Host</span>
          </label>
          <div className="row">
            <input
              id="ollama-host"
              className="input mono grow"
              value={form.ollamaHost}
              onChange={(e) => edit({ ollamaHost: e.target.value })}
              placeholder={view.defaultHost}
              aria-label="Ollama host"
              aria-invalid={problems.ollamaHost ? true : undefined}
              aria-describedby="ollama-host-help"
              spellCheck={false}
              autoComplete="off"
            />
            <button
              type="button"
              className="button"
              onClick={() => runTest(form.ollamaHost, view.defaultHost)}
              disabled={Boolean(problems.ollamaHost) || testing}
            >
              {testing ? 'Testing…' : 'Test connection'}
            </button>
          </div>
          {problems.ollamaHost ? (
            <p className="inline-error small" id="ollama-host-help" data-testid="host-problem">
              {problems.ollamaHost}
            </p>
          ) : (
            <p className="muted small" id="ollama-host-help">
              host, host:port or http://host:port. Empty uses <span className="mono">{view.defaultHost}</span> (OLLAMA_HOST, or
              Ollama's default). A saved host is used at once, by running tasks too.
            </p>
          )}
          <TestResult test={test} hostNow={hostNow} defaultHost={view.defaultHost} />
        </div>
      </section>

      <section className="panel settings-section" aria-labelledby="set-models">
        <div className="panel-head">
          <h2 id="set-models">Default models</h2>
          <span className="panel-meta">A new task uses these unless its form picks others.</span>
        </div>
        <div className="settings-body">
          {listed === undefined && !testing && (
            <p className="inline-warn small" data-testid="models-free-text">
              Ollama did not answer, so these are typed, not chosen from a list: a name is not checked until Ollama answers.
            </p>
          )}
          <div className="role-grid">
            {ROLES.map((r) => (
              <RoleField
                key={r.id}
                role={r.id}
                label={r.label}
                hint={r.hint}
                value={form.models[r.id] ?? ''}
                listed={listed}
                host={tested?.host ?? ''}
                waiting={testing && listed === undefined}
                problem={problems[`models.${r.id}`]}
                onChange={(m) => setModel(r.id, m)}
              />
            ))}
          </div>
        </div>
      </section>

      <div className="settings-pair">
        <section className="panel settings-section" aria-labelledby="set-approval">
          <div className="panel-head">
            <h2 id="set-approval">Approval default</h2>
          </div>
          <fieldset className="settings-body field" aria-describedby="approval-help">
            <legend className="sr-only">Approval default</legend>
            {MODES.map((m) => (
              <label key={m.id} className="radio-row">
                <input
                  type="radio"
                  name="approval"
                  checked={(form.approvalMode || DEFAULT_MODE) === m.id}
                  onChange={() => edit({ approvalMode: m.id })}
                />
                <span>
                  {m.label}
                  {m.id === DEFAULT_MODE && <span className="muted"> (ducklm's default)</span>}
                  <span className="muted small block">{m.hint}</span>
                </span>
              </label>
            ))}
            <p className="muted small" id="approval-help">
              Without a sandbox (bubblewrap), every shell step asks whatever the mode.
            </p>
            {problems.approvalMode && <p className="inline-error small">{problems.approvalMode}</p>}
          </fieldset>
          <label className="settings-body field">
            <span className="field-label">Allowed web hosts</span>
            <textarea
              className="input mono"
              rows={3}
              value={(form.allowedHosts ?? []).join('\n')}
              onChange={(e) => edit({ allowedHosts: e.target.value.split('\n') })}
              aria-describedby="hosts-help"
              placeholder="docs.example.org"
            />
            <span className="muted small" id="hosts-help">
              One a line (example.com, *.example.com, or an address). web_fetch and browser steps of new tasks reach these without asking; any other host asks first.
            </span>
            {problems.allowedHosts && <span className="inline-error small">{problems.allowedHosts}</span>}
          </label>
        </section>

        <div className="settings-col">
          <section className="panel settings-section" aria-labelledby="set-theme">
            <div className="panel-head">
              <h2 id="set-theme">Theme</h2>
            </div>
            <div className="settings-body">
              <div className="segmented" role="radiogroup" aria-labelledby="set-theme">
                {THEMES.map((t) => (
                  <label key={t.id} className={themeChoice(form.theme) === t.id ? 'on' : undefined}>
                    <input type="radio" name="theme" checked={themeChoice(form.theme) === t.id} onChange={() => edit({ theme: t.id })} />
                    {t.label}
                  </label>
                ))}
              </div>
              <p className="muted small">
                {themeChoice(form.theme) !== themeChoice(saved.theme)
                  ? 'Shown now; kept when you save.'
                  : themeChoice(form.theme) === 'system'
                    ? 'Follows your system, and changes when it does.'
                    : `Always ${form.theme}, whatever your system uses.`}
              </p>
              {problems.theme && <p className="inline-error small">{problems.theme}</p>}
            </div>
          </section>

          <section className="panel settings-section" aria-labelledby="set-task-steps">
            <div className="panel-head">
              <h2 id="set-task-steps">Task steps</h2>
            </div>
            <div className="settings-body">
              <div className="segmented" role="radiogroup" aria-labelledby="set-task-steps">
                {TASK_STEPS.map((t) => (
                  <label key={t.id} className={(form.taskSteps ?? 'workers') === t.id ? 'on' : undefined}>
                    <input type="radio" name="task-steps" checked={(form.taskSteps ?? 'workers') === t.id} onChange={() => edit({ taskSteps: t.id })} />
                    {t.label}
                  </label>
                ))}
              </div>
              <p className="muted small" data-testid="task-steps-help">
                {(form.taskSteps ?? 'workers') === 'workers'
                  ? "On a team's database, a task's world_search runs its branches on the team's workers when one is alive (the same result), and here when none is."
                  : "A task's world_search always runs its branches in this process, even when the team's workers are alive."}
              </p>
              {problems.taskSteps && <p className="inline-error small">{problems.taskSteps}</p>}
            </div>
          </section>

          <section className="panel settings-section" aria-labelledby="set-runs">
            <div className="panel-head">
              <h2 id="set-runs">Runs</h2>
            </div>
            <div className="settings-body">
              <label className="field" htmlFor="max-reviews">
                <span className="field-label">Review rounds</span>
              </label>
              <input
                id="max-reviews"
                className="input num"
                type="number"
                min={1}
                max={RUN_LOOP.maxReviews}
                step={1}
                value={form.maxReviews ? String(form.maxReviews) : ''}
                onChange={(e) => edit({ maxReviews: e.target.value.trim() === '' ? 0 : Math.trunc(Number(e.target.value)) })}
                placeholder={`${RUN_LOOP.reviews} (ducklm's default)`}
                aria-invalid={problems.maxReviews ? true : undefined}
                aria-describedby="max-reviews-help"
              />
              {problems.maxReviews ? (
                <p className="inline-error small" id="max-reviews-help">
                  {problems.maxReviews}
                </p>
              ) : (
                <p className="muted small" id="max-reviews-help">
                  When a plan's steps are done, the planning model reads their results and answers the task, or adds steps. A run that
                  still has no answer after this many reviews ends and says what was done. From 1 to {RUN_LOOP.maxReviews}; empty is{' '}
                  {RUN_LOOP.reviews}. Holds for new tasks.
                </p>
              )}
              <label className="field" htmlFor="critic-threshold">
                <span className="field-label">Critic threshold</span>
              </label>
              <input
                id="critic-threshold"
                className="input num"
                type="number"
                min={0.05}
                max={1}
                step={0.05}
                value={form.criticThreshold ? String(form.criticThreshold) : ''}
                onChange={(e) => edit({ criticThreshold: e.target.value.trim() === '' ? 0 : Number(e.target.value) })}
                placeholder={`${RUN_LOOP.threshold} (ducklm's default)`}
                aria-invalid={problems.criticThreshold ? true : undefined}
                aria-describedby="critic-threshold-help"
              />
              {problems.criticThreshold ? (
                <p className="inline-error small" id="critic-threshold-help">
                  {problems.criticThreshold}
                </p>
              ) : (
                <p className="muted small" id="critic-threshold-help">
                  A step of a model's plan that the critic scores below this counts as failed, and the plan is revised around it. From
                  0 to 1; empty is {RUN_LOOP.threshold}. Holds for new tasks.
                </p>
              )}
            </div>
          </section>

          <section className="panel settings-section" aria-labelledby="set-worlds">
            <div className="panel-head">
              <h2 id="set-worlds">World programs</h2>
            </div>
            <div className="settings-body">
              <label className="field" htmlFor="world-memory">
                <span className="field-label">Memory limit (MiB)</span>
              </label>
              <input
                id="world-memory"
                className="input num"
                type="number"
                min={WORLD_MEMORY.min}
                max={WORLD_MEMORY.max}
                step={1}
                value={form.worldMemoryMiB ? String(form.worldMemoryMiB) : ''}
                onChange={(e) => edit({ worldMemoryMiB: e.target.value.trim() === '' ? 0 : Math.trunc(Number(e.target.value)) })}
                placeholder={`${WORLD_MEMORY.default} (ducklm's default)`}
                aria-invalid={problems.worldMemoryMiB ? true : undefined}
                aria-describedby="world-memory-help"
              />
              {problems.worldMemoryMiB ? (
                <p className="inline-error small" id="world-memory-help" data-testid="world-memory-problem">
                  {problems.worldMemoryMiB}
                </p>
              ) : (
                <p className="muted small" id="world-memory-help">
                  Each world program runs in its own process held to this much memory; one that needs more fails its run and says so. From{' '}
                  {WORLD_MEMORY.min} to {WORLD_MEMORY.max.toLocaleString('en')} MiB; empty is {WORLD_MEMORY.default}. Holds from the next step.
                </p>
              )}
            </div>
          </section>

          <section className="panel settings-section" aria-labelledby="set-data">
            <div className="panel-head">
              <h2 id="set-data">Data directory</h2>
            </div>
            <div className="settings-body">
              <div className="row">
                <input className="input mono grow" value={view.dataDir} readOnly aria-label="Data directory" />
                <CopyButton text={view.dataDir} what="data directory" copy={copy} />
              </div>
              <p className="muted small">Runs, worlds, memories and settings.json live here. Start ducklm with DUCKLM_HOME set to use another.</p>
            </div>
          </section>
        </div>
      </div>

      <DatabaseSection api={api} inView={section === 'database'} />

      <ToolsSection api={api} inView={section === 'tools'} />

      <TrustedSignersSection api={api} copy={copy} />

      <div className={`settings-bar${dirty ? ' floating' : ''}`} role="region" aria-label="Save settings">
        <SaveStatus dirty={dirty} checking={checking} saving={saving} note={note} problems={problems} />
        <span className="spacer" />
        <button type="button" className="button" onClick={revert} disabled={!dirty || saving}>
          Revert
        </button>
        <button type="submit" className="button primary" disabled={!canSave}>
          {saving ? 'Saving…' : 'Save'}
        </button>
      </div>
    </form>
  );
}

function TestResult({ test, hostNow, defaultHost }: { test: Test; hostNow: string; defaultHost: string }) {
  if (test.status === 'idle') return null;
  const stale = test.host.trim() !== hostNow;
  const label = test.host.trim() === '' ? defaultHost : test.host.trim();
  return (
    <div className="ollama-test" data-testid="ollama-test" aria-live="polite">
      {test.status === 'testing' && (
        <p className="muted small row">
          <span className="spinner" aria-hidden="true" /> Asking the Ollama at <span className="mono">{label}</span> for its models…
        </p>
      )}
      {test.status === 'refused' && <p className="inline-error small">{test.message}</p>}
      {test.status === 'done' && test.info.reachable && (
        <>
          <p className="status-note ok small" data-testid="ollama-reachable">
            ✓ Reachable: the Ollama at <span className="mono">{test.info.host}</span> lists {test.info.models.length}{' '}
            {test.info.models.length === 1 ? 'model' : 'models'}.
          </p>
          {test.info.models.length === 0 ? (
            <p className="muted small">It has no models yet: run ollama pull qwen2.5:7b, then test again.</p>
          ) : (
            <ul className="chips model-chips" aria-label="Models found">
              {test.info.models.map((m) => (
                <li key={m} className="chip mono">
                  {m}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
      {test.status === 'done' && !test.info.reachable && (
        <p className="inline-error small" data-testid="ollama-unreachable">
          ✗ {test.info.error ?? `Ollama does not answer at ${test.info.host}.`}
        </p>
      )}
      {stale && test.status !== 'testing' && <p className="muted small">That was {label || 'the default host'}; test again for the host typed now.</p>}
    </div>
  );
}

interface RoleFieldProps {
  role: ModelRole;
  label: string;
  hint: string;
  value: string;
  /** The models Ollama listed; undefined when it did not answer. */
  listed: string[] | undefined;
  host: string;
  waiting: boolean;
  problem: string | undefined;
  onChange: (model: string) => void;
}

function RoleField({ role, label, hint, value, listed, host, waiting, problem, onChange }: RoleFieldProps) {
  const id = `model-${role}`;
  const name = `Default model for the ${role}`;
  const auto = role === 'embedder' ? 'Automatic: an embedding model, else the built-in one' : "Automatic: the router's choice";
  let control;
  let note: string | undefined;
  if (listed === undefined) {
    control = (
      <input
        id={id}
        className="input mono"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        placeholder={waiting ? 'asking Ollama…' : "empty: the router's choice"}
        aria-label={name}
        aria-invalid={problem ? true : undefined}
        spellCheck={false}
        autoComplete="off"
        disabled={waiting}
      />
    );
  } else {
    const { fit, other, missing } = roleModels(role, listed, value);
    const selected = value === '' ? '' : (listed.find((m) => m === value) ?? listed.find((m) => m.toLowerCase() === value.toLowerCase()) ?? value);
    if (missing) note = `${missing} is not in the Ollama at ${host}: run ollama pull ${missing}, or choose another.`;
    control = (
      <select id={id} className="input" value={selected} onChange={(e) => onChange(e.target.value)} aria-label={name} aria-invalid={problem ? true : undefined}>
        <option value="">{auto}</option>
        {missing && <option value={missing}>{missing} (not in this Ollama)</option>}
        {role === 'embedder' && <option value={BUILTIN_EMBEDDER}>{BUILTIN_EMBEDDER} (built in, needs no Ollama)</option>}
        {fit.length > 0 && (
          <optgroup label={role === 'embedder' ? 'Embedding models' : 'Models'}>
            {fit.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </optgroup>
        )}
        {other.length > 0 && (
          <optgroup label="Chat models (embed only when chosen)">
            {other.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </optgroup>
        )}
      </select>
    );
  }
  return (
    <div className="role-field" data-role={role}>
      <label htmlFor={id} className="role-label">
        {label}
        <span className="muted small block">{hint}</span>
      </label>
      <div className="role-control">
        {control}
        {problem && <p className="inline-error small">{problem}</p>}
        {!problem && note && <p className="inline-warn small">{note}</p>}
      </div>
    </div>
  );
}

function SaveStatus({ dirty, checking, saving, note, problems }: { dirty: boolean; checking: boolean; saving: boolean; note: Note; problems: Record<string, string> }) {
  const count = Object.keys(problems).length;
  let text: ReactNode;
  let cls = 'muted';
  if (saving) text = 'Saving…';
  else if (note?.kind === 'failed') {
    text = `Not saved: ${note.message}`;
    cls = 'inline-error';
  } else if (note?.kind === 'saved') {
    text = (
      <>
        ✓ Saved. ducklm now uses the Ollama at <span className="mono">{note.host}</span>.
      </>
    );
    cls = 'ok';
  } else if (dirty && count > 0) {
    text = problems.form ?? `Fix ${count === 1 ? 'the field marked in red' : `the ${count} fields marked in red`} to save.`;
    cls = 'inline-error';
  } else if (dirty) text = checking ? 'Unsaved changes (checking…)' : 'Unsaved changes.';
  else text = 'No unsaved changes.';
  return (
    <p className={`small ${cls}`} role="status" data-testid="save-status">
      {text}
    </p>
  );
}
