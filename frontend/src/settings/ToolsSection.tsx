import { useEffect, useRef, useState } from 'react';
import { type DucklmApi, type McpServer, type McpServerInput, toBridgeError } from '../bridge';
import { sentence } from '../lib/format';
import { useLoad } from '../ui/useLoad';

interface ToolsSectionProps {
  api: DucklmApi;
  /** Bring the section into view once its servers are listed (#/settings/tools, ducklm open tools). */
  inView?: boolean;
}

/** What a server's row is doing: testing it, asking to remove it, or what the last action said. */
type Busy = { name: string; what: 'testing' | 'removing' | 'confirm' | 'marking' } | undefined;
type Said = { name: string; kind: 'ok' | 'error'; text: string } | undefined;

const EMPTY: McpServerInput = { name: '', command: '', args: [], url: '', network: false, workspace: false, private: false };

/** reach says in words what a server can reach, as `ducklm mcp ls` does. */
export function reach(s: McpServer): string {
  if (s.url) return s.private ? 'Reached by URL, its private addresses approved.' : "Reached by URL, through web_fetch's host checks.";
  return [
    'Runs in the sandbox',
    s.workspace ? "writes the run's workspace" : 'writes only a folder of its own',
    s.network ? 'may reach the network.' : 'no network.',
  ].join(', ');
}

/**
 * ToolsSection lists the MCP servers whose tools runs may use (Go:
 * mcpclient), each with how it stands, what it can reach, its tools (each
 * with a "safe" switch: ask_risky runs a safe tool's calls without asking)
 * and the tools left out; it tests, removes and adds servers.
 */
export function ToolsSection({ api, inView = false }: ToolsSectionProps) {
  const [load, reload] = useLoad(() => api.mcpServers(), [api]);
  const section = useRef<HTMLElement>(null);
  const shown = useRef(false);
  const listed = load.status !== 'loading';
  useEffect(() => {
    if (!inView || !listed || shown.current) return;
    shown.current = true;
    section.current?.scrollIntoView?.({ block: 'start' });
  }, [inView, listed]);
  const [busy, setBusy] = useState<Busy>();
  const [said, setSaid] = useState<Said>();
  const [kind, setKind] = useState<'command' | 'url'>('command');
  const [form, setForm] = useState<McpServerInput>(EMPTY);
  const [argsText, setArgsText] = useState('');
  const [adding, setAdding] = useState(false);
  const [addError, setAddError] = useState<string>();
  // A safe switch shows what was asked at once, then what the backend
  // answered, until the list is read again.
  const [want, setWant] = useState<{ server: string; tool: string; safe: boolean }>();
  const [answered, setAnswered] = useState<Record<string, McpServer>>({});
  useEffect(() => setAnswered({}), [load.value]);

  const act = (name: string, what: 'testing' | 'removing' | 'marking', call: () => Promise<unknown>, ok: (v: unknown) => string) => {
    setBusy({ name, what });
    setSaid(undefined);
    call().then(
      (v) => {
        setBusy(undefined);
        setSaid({ name, kind: 'ok', text: ok(v) });
        reload();
      },
      (e: unknown) => {
        setBusy(undefined);
        setSaid({ name, kind: 'error', text: sentence(toBridgeError(e).message) });
        reload();
      },
    );
  };

  const add = () => {
    setAdding(true);
    setAddError(undefined);
    const input: McpServerInput =
      kind === 'command'
        ? { ...form, url: '', private: false, args: argsText.split('\n').filter((a) => a.trim() !== '') }
        : { ...form, command: '', args: [], network: false, workspace: false };
    api.addMcpServer(input).then(
      (s) => {
        setAdding(false);
        setForm(EMPTY);
        setArgsText('');
        setSaid({
          name: s.name,
          kind: s.state === 'ready' ? 'ok' : 'error',
          text: s.state === 'ready' ? `Added ${s.name}: ${s.tools.length} tools.` : `Added ${s.name}, but it did not start: fix what it says and press Test, or remove it.`,
        });
        reload();
      },
      (err: unknown) => {
        setAdding(false);
        setAddError(sentence(toBridgeError(err).message));
      },
    );
  };

  const servers = (load.value ?? []).map((s) => answered[s.name] ?? s);
  const isSafe = (server: string, tool: string, stored: boolean | undefined) =>
    want && want.server === server && want.tool === tool ? want.safe : stored === true;
  return (
    <section ref={section} className="panel settings-section mcp-tools" aria-labelledby="set-tools">
      <div className="panel-head">
        <h2 id="set-tools">Tools</h2>
        <span className="panel-meta">MCP servers whose tools runs may use, named mcp__SERVER__TOOL.</span>
      </div>
      <div className="settings-body">
        {load.status === 'loading' && <p className="muted small">Starting the MCP servers to list their tools…</p>}
        {load.status === 'error' && (
          <div className="row" role="alert">
            <p className="inline-error small grow">The MCP servers could not be listed: {sentence(load.message)}</p>
            <button type="button" className="button small" onClick={reload}>
              Try again
            </button>
          </div>
        )}
        {load.status !== 'loading' && servers.length === 0 && load.status !== 'error' && (
          <p className="muted small" data-testid="mcp-empty">
            No MCP server is added. Add one below, or with ducklm mcp add.
          </p>
        )}
        {servers.length > 0 && (
          <ul className="mcp-servers" aria-label="MCP servers">
            {servers.map((s) => (
              <li key={s.name} className="mcp-server" aria-label={s.name}>
                <div className="row wrap">
                  <strong className="mono">{s.name}</strong>
                  <span className={`badge mcp-state mcp-${s.state.replace(' ', '-')}`}>{s.state}</span>
                  <code className="mono small grow mcp-what">{s.url || [s.command, ...(s.args ?? [])].join(' ')}</code>
                  <button
                    type="button"
                    className="button small"
                    disabled={busy !== undefined}
                    onClick={() =>
                      act(s.name, 'testing', () => api.testMcpServer(s.name), (v) => `${s.name} started and listed ${(v as McpServer).tools.length} tools.`)
                    }
                  >
                    {busy?.name === s.name && busy.what === 'testing' ? 'Testing…' : 'Test'}
                  </button>
                  <button type="button" className="button danger small" disabled={busy !== undefined} onClick={() => setBusy({ name: s.name, what: 'confirm' })}>
                    Remove…
                  </button>
                </div>
                <p className="muted small">{reach(s)}</p>
                {s.error && <p className="inline-error small">{sentence(s.error)}</p>}
                {busy?.name === s.name && busy.what === 'confirm' && (
                  <div className="confirm-box" role="group" aria-label={`Confirm removing ${s.name}`}>
                    <p className="small">Remove {s.name}? Its tools leave the catalog; plans that name them no longer validate.</p>
                    <div className="actions">
                      <button
                        type="button"
                        className="button danger"
                        onClick={() => act(s.name, 'removing', () => api.removeMcpServer(s.name), () => `Removed ${s.name}.`)}
                      >
                        Remove
                      </button>
                      <button type="button" className="button" onClick={() => setBusy(undefined)}>
                        Keep
                      </button>
                    </div>
                  </div>
                )}
                {said?.name === s.name && (
                  <p className={said.kind === 'ok' ? 'status-note ok small' : 'inline-error small'} role={said.kind === 'ok' ? 'status' : 'alert'}>
                    {said.text}
                  </p>
                )}
                {s.tools.length > 0 && (
                  <p className="muted small">
                    A ticked tool is safe: its calls run without asking in the risky mode. The others ask every time.
                  </p>
                )}
                {s.tools.length > 0 && (
                  <ul className="mcp-tool-list" aria-label={`Tools of ${s.name}`}>
                    {s.tools.map((t) => (
                      <li key={t.name} className="mcp-tool">
                        <label className="check-row">
                          <input
                            type="checkbox"
                            checked={isSafe(s.name, t.name, t.safe)}
                            disabled={busy !== undefined}
                            aria-label={`${t.name} is safe`}
                            onChange={(e) => {
                              const safe = e.target.checked;
                              setWant({ server: s.name, tool: t.name, safe });
                              act(
                                s.name,
                                'marking',
                                () =>
                                  api.markMcpToolSafe(s.name, t.name, safe).then(
                                    (fresh) => {
                                      setAnswered((a) => ({ ...a, [fresh.name]: fresh }));
                                      setWant(undefined);
                                    },
                                    (err: unknown) => {
                                      setWant(undefined);
                                      throw err;
                                    },
                                  ),
                                () => (safe ? `${t.name} runs without asking in the risky mode.` : `${t.name} asks again in the risky mode.`),
                              );
                            }}
                          />
                          <span>
                            <code className="mono small">{t.catalog}</code>
                            {t.readOnlyHint && <span className="muted small"> · the server says it only reads</span>}
                            {t.description && <span className="muted small block">{t.description}</span>}
                          </span>
                        </label>
                      </li>
                    ))}
                  </ul>
                )}
                {(s.refused ?? []).map((r) => (
                  <p key={r} className="muted small">
                    {r}
                  </p>
                ))}
              </li>
            ))}
          </ul>
        )}
        {said && !servers.some((s) => s.name === said.name) && (
          <p className={said.kind === 'ok' ? 'status-note ok small' : 'inline-error small'} role={said.kind === 'ok' ? 'status' : 'alert'}>
            {said.text}
          </p>
        )}
        {/* Not a <form>: the section sits inside the settings form, and a nested form is not one. */}
        <div className="mcp-add field" role="form" aria-label="Add an MCP server">
          <span className="field-label">Add a server</span>
          <div className="segmented" role="radiogroup" aria-label="How ducklm reaches it">
            {(['command', 'url'] as const).map((k) => (
              <label key={k} className={kind === k ? 'on' : undefined}>
                <input type="radio" name="mcp-kind" checked={kind === k} onChange={() => setKind(k)} />
                {k === 'command' ? 'A command ducklm starts' : 'A URL'}
              </label>
            ))}
          </div>
          <label className="field">
            <span className="field-label">Name</span>
            <input className="input mono" value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} placeholder="files" />
          </label>
          {kind === 'command' ? (
            <>
              <label className="field">
                <span className="field-label">Command</span>
                <input
                  className="input mono"
                  value={form.command}
                  onChange={(e) => setForm({ ...form, command: e.target.value })}
                  placeholder="/path/to/node_modules/.bin/mcp-server-filesystem"
                />
              </label>
              <label className="field">
                <span className="field-label">Arguments</span>
                <textarea className="input mono" rows={2} value={argsText} onChange={(e) => setArgsText(e.target.value)} placeholder="/" />
                <span className="muted small">One a line. The server sees only its own files and one writable folder, whatever it is allowed.</span>
              </label>
              <label className="check-row">
                <input type="checkbox" checked={form.workspace} onChange={(e) => setForm({ ...form, workspace: e.target.checked })} />
                <span>Let it write the run's workspace (otherwise a folder of its own)</span>
              </label>
              <label className="check-row">
                <input type="checkbox" checked={form.network} onChange={(e) => setForm({ ...form, network: e.target.checked })} />
                <span>Let it reach the network (its calls then ask in every mode)</span>
              </label>
            </>
          ) : (
            <>
              <label className="field">
                <span className="field-label">URL</span>
                <input className="input mono" value={form.url} onChange={(e) => setForm({ ...form, url: e.target.value })} placeholder="https://mcp.example.com/mcp" />
              </label>
              <label className="check-row">
                <input type="checkbox" checked={form.private} onChange={(e) => setForm({ ...form, private: e.target.checked })} />
                <span>Approve its host's private or loopback addresses (localhost, 10.x…)</span>
              </label>
            </>
          )}
          {addError && (
            <p className="inline-error small" role="alert">
              {addError}
            </p>
          )}
          <div className="actions">
            <button type="button" className="button primary" disabled={adding} onClick={add}>
              {adding ? 'Adding…' : 'Add server'}
            </button>
          </div>
        </div>
      </div>
    </section>
  );
}
