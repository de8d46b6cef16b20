import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { DeliberationRound, DucklmApi } from '../bridge';
import { EMPTY_OVERLAY, LARGE_ROUND, SCORE_TONES, deliberatingWorlds, searchOverlay } from '../lib/deliberationTree';
import { type ForkEdge, buildLineageOutline, descendants, nodeState, hiddenBy, layoutInput, searchLineage, toggleSelection } from '../lib/lineage';
import { shortId } from '../lib/ids';
import { countOf, formatCount } from '../lib/format';
import { formatRelative } from '../lib/time';
import { useLoad, useThrottled } from '../ui/useLoad';
import { useRelativeNow } from '../ui/useNow';
import { navigate } from '../ui/useRoute';
import { CompareView } from './CompareView';
import { LineageCanvas } from './LineageCanvas';
import { LineageFind } from './LineageFind';
import { useLayout } from './useLayout';
import './lineage.css';

/** toggleFold unfolds ids when all of them are folded, else folds them all. */
function toggleFold(collapsed: ReadonlySet<string>, ids: ReadonlySet<string>, folded: boolean): ReadonlySet<string> {
  const next = new Set(collapsed);
  for (const id of ids) if (folded) next.delete(id);
  else next.add(id);
  return next;
}

/**
 * LineageView is the fork DAG of every world and run. The layout is made once
 * per lineage and per fold (a folded subtree takes no room); selection and
 * search are layered on top of it.
 */
export function LineageView({ api, select, compare }: { api: DucklmApi; select?: string; compare?: [string, string] }) {
  const [lineage, reload] = useLoad(() => api.lineageOutline(), [api]);
  const model = useMemo(() => (lineage.value ? buildLineageOutline(lineage.value) : undefined), [lineage.value]);
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const hidden = useMemo(() => (model ? hiddenBy(model, collapsed) : new Set<string>()), [model, collapsed]);
  const input = useMemo(() => (model ? layoutInput(model, hidden) : undefined), [model, hidden]);
  const layout = useLayout(input);
  // Where the time to the first drawing goes, for the performance measurement (tests/perf).
  useEffect(() => {
    if (model) performance.mark('lineage:loaded', { detail: { worlds: model.nodes.length } });
  }, [model]);
  useEffect(() => {
    if (layout.status === 'ready') performance.mark('lineage:laid-out', { detail: { ms: layout.layout.ms } });
  }, [layout]);

  const [selected, setSelected] = useState<string[]>(select ? [select] : []);

  // Deliberations: each searching world's rounds colour its branches by
  // score and mark the chosen line; rounds before the latest start folded.
  const searching = useMemo(() => (model ? deliberatingWorlds(model) : new Map<string, string>()), [model]);
  const [rounds] = useLoad(async () => {
    const out = new Map<string, DeliberationRound[]>();
    for (const [world, run] of searching) out.set(world, await api.deliberations(run));
    return out;
  }, [api, searching]);
  const overlay = useMemo(() => (model && rounds.value ? searchOverlay(model, rounds.value) : EMPTY_OVERLAY), [model, rounds.value]);
  // An older round is folded when it is first seen, never again: a live
  // refresh does not undo the user's unfolding.
  const folded = useRef(new Set<string>());
  useEffect(() => {
    const fresh = [...overlay.olderRounds, ...overlay.offLine, ...overlay.unrecorded].filter((id) => !folded.current.has(id));
    if (fresh.length === 0) return;
    for (const id of fresh) folded.current.add(id);
    setCollapsed((c) => new Set([...c, ...fresh]));
  }, [overlay]);
  // Live: a search's branches (forks) and rounds appear as they are recorded.
  const refresh = useThrottled(reload, 2000);
  useEffect(() => api.onLedgerEvents((batch) => batch.some((e) => e.type === 'world.forked' || e.type === 'deliberation.round') && refresh()), [api, refresh]);
  const olderFolded = overlay.olderRounds.size > 0 && [...overlay.olderRounds].every((id) => collapsed.has(id));
  const offLineFolded = overlay.offLine.size > 0 && [...overlay.offLine].every((id) => collapsed.has(id));
  const unrecordedFolded = overlay.unrecorded.size > 0 && [...overlay.unrecorded].every((id) => collapsed.has(id));
  const [query, setQuery] = useState('');
  const [matchIndex, setMatchIndex] = useState(0);
  const [focus, setFocus] = useState<{ id?: string; tick: number }>({ ...(select ? { id: select } : {}), tick: 0 });
  const [comparing, setComparing] = useState<[string, string]>();
  // An address that names two runs (ducklm open compare A B) selects their
  // worlds and compares them, once the lineage is in.
  const compareKey = compare ? compare.join(',') : '';
  useEffect(() => {
    if (!model || !compare) return;
    const worlds = compare.map((run) => model.nodes.find((n) => n.runId === run)?.id);
    if (worlds[0] && worlds[1]) setSelected([worlds[0], worlds[1]]);
    setComparing(compare);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [model, compareKey]);
  const now = useRelativeNow(selected.flatMap((id) => model?.byId.get(id)?.createdAt ?? []));

  const collapsedCounts = useMemo(() => {
    const m = new Map<string, number>();
    if (model) for (const id of collapsed) if (!hidden.has(id)) m.set(id, descendants(model, id).length);
    return m;
  }, [model, collapsed, hidden]);
  const matches = useMemo(() => (model ? searchLineage(model, query) : []), [model, query]);
  const matchSet = useMemo(() => new Set(matches), [matches]);

  useEffect(() => setMatchIndex(0), [query]);

  const onSelect = useCallback((id: string, additive: boolean) => setSelected((s) => toggleSelection(s, id, additive)), []);
  const open = useCallback(
    (id: string) => {
      const n = model?.byId.get(id);
      if (!n?.runId) return;
      navigate(n.domain === 'real' ? { screen: 'run', runId: n.runId } : { screen: 'world', runId: n.runId });
    },
    [model],
  );

  const goToMatch = (step: number) => {
    if (matches.length === 0) return;
    const i = (matchIndex + step + matches.length) % matches.length;
    const id = matches[i]!;
    setMatchIndex(i);
    // A match inside a collapsed subtree is brought back into view.
    if (hidden.has(id) && model) {
      setCollapsed((c) => new Set([...c].filter((x) => !descendants(model, x).includes(id))));
    }
    setSelected([id]);
    setFocus((f) => ({ id, tick: f.tick + 1 }));
  };

  const first = selected[0] ? model?.byId.get(selected[0]) : undefined;
  const second = selected[1] ? model?.byId.get(selected[1]) : undefined;
  const canCompare = first?.runId !== undefined && second?.runId !== undefined;

  return (
    <div className="screen lineage">
      <header className="screen-head">
        <h1>Lineage</h1>
        <span className="muted">
          {model ? `${countOf(model.nodes.length, 'world')}, ${countOf(model.edges.length, 'fork')}` : ''}
          {layout.status === 'ready' && ` · laid out in ${Math.round(layout.layout.ms)} ms`}
        </span>
        <LineageFind model={model} query={query} matches={matches} index={matchIndex} current={selected[0]} onQuery={setQuery} onGo={goToMatch} />
        <button type="button" className="button small" onClick={reload}>
          Refresh
        </button>
      </header>

      {lineage.status === 'loading' && (
        <p className="loading pad">
          <span className="spinner" aria-hidden="true" /> Reading the lineage…
        </p>
      )}
      {lineage.status === 'error' && !lineage.value && (
        <section className="panel error-panel" role="alert">
          <div className="error-body">
            <h2>The lineage could not be read</h2>
            <p className="error-message">{lineage.message}</p>
            <button type="button" className="button primary" onClick={reload}>
              Try again
            </button>
          </div>
        </section>
      )}
      {model && model.nodes.length === 0 && <p className="empty">No worlds yet. Runs and simulated worlds appear here with their forks.</p>}

      {model && model.nodes.length > 0 && (
        <div className="lineage-body">
          <section className="panel lineage-graph" aria-label="Fork graph">
            {layout.status === 'working' && (
              <p className="loading pad" role="status">
                <span className="spinner" aria-hidden="true" /> Laying out {formatCount(layout.nodes)} worlds…
              </p>
            )}
            {layout.status === 'error' && (
              <p className="inline-error pad" role="alert">
                {layout.message}
              </p>
            )}
            {layout.status === 'ready' && (
              <LineageCanvas
                model={model}
                layout={layout.layout}
                selected={selected}
                matches={matchSet}
                hidden={hidden}
                collapsed={collapsedCounts}
                overlay={overlay}
                focus={focus.id}
                focusTick={focus.tick}
                onSelect={onSelect}
                onOpen={open}
              />
            )}
            <div className="legend small">
              <span className="legend-item domain-real">task run</span>
              <span className="legend-item domain-simulated">simulated</span>
              <span className="muted">click selects · shift-click a second to compare · double-click opens · drag or wheel to pan · ctrl+wheel to zoom · arrow keys move between worlds</span>
            </div>
            {(overlay.tone.size > 0 || overlay.unrecorded.size > 0) && (
              <div className="legend small score-legend" data-testid="score-legend">
                {overlay.tone.size > 0 && (
                  <>
                    <span>Branch score within its round:</span>
                    <span className="score-scale" role="img" aria-label={`${SCORE_TONES} steps from lower to higher score`}>
                      lower
                      {Array.from({ length: SCORE_TONES }, (_, i) => (
                        <span key={i} className={`score-swatch tone-${i}`} style={{ width: `${(i + 1) * 5}px` }} />
                      ))}
                      higher
                    </span>
                    <span className="legend-item chosen-line">chosen line</span>
                  </>
                )}
                {overlay.unrecorded.size > 0 && (
                  <button
                    type="button"
                    className="button small"
                    title="No recorded round scored these branches: a search records its round when it finishes, so they belong to one stopped before that or still running (or they failed)"
                    onClick={() => setCollapsed((c) => toggleFold(c, overlay.unrecorded, unrecordedFolded))}
                  >
                    {unrecordedFolded
                      ? `Unfold ${formatCount(overlay.unrecordedBranches)} unscored ${overlay.unrecordedBranches === 1 ? 'branch' : 'branches'}`
                      : 'Fold the unscored branches'}
                  </button>
                )}
                {overlay.olderRounds.size > 0 && (
                  <button
                    type="button"
                    className="button small"
                    onClick={() => setCollapsed((c) => toggleFold(c, overlay.olderRounds, olderFolded))}
                  >
                    {olderFolded ? `Unfold ${overlay.rounds - searching.size} older ${overlay.rounds - searching.size === 1 ? 'round' : 'rounds'}` : 'Fold older rounds'}
                  </button>
                )}
                {overlay.offLine.size > 0 && (
                  <button
                    type="button"
                    className="button small"
                    title={`A latest round of more than ${LARGE_ROUND} branches starts folded to its chosen line`}
                    onClick={() => setCollapsed((c) => toggleFold(c, overlay.offLine, offLineFolded))}
                  >
                    {offLineFolded ? `Unfold the latest round (${overlay.offLineBranches.toLocaleString('en')} branches)` : 'Fold the latest round to its chosen line'}
                  </button>
                )}
              </div>
            )}
          </section>

          <aside className="lineage-side">
            {selected.length === 0 && <p className="muted pad">Select a world to see it here; shift-click a second one to compare them.</p>}
            {[first, second].map(
              (n, i) =>
                n && (
                  <section key={n.id} className={`panel world-card side-${i === 0 ? 'a' : 'b'}`} aria-label={`Selected world ${n.name}`}>
                    <header className="panel-head">
                      <h2 className="ellipsis">{n.name || shortId(n.id)}</h2>
                    </header>
                    <dl className="facts pad">
                      <div className="fact">
                        <dt>World</dt>
                        <dd className="mono" title={n.id}>
                          {shortId(n.id)}
                        </dd>
                      </div>
                      <div className="fact">
                        <dt>Domain</dt>
                        <dd>{n.domain}</dd>
                      </div>
                      <div className="fact">
                        <dt>Latest run</dt>
                        <dd>{n.status ? `${nodeState(n)!.label} (${countOf(n.runs, 'run')})` : 'none'}</dd>
                      </div>
                      <div className="fact">
                        <dt>Created</dt>
                        <dd>{formatRelative(n.createdAt, now)}</dd>
                      </div>
                      {n.round !== undefined && (
                        <div className="fact">
                          <dt>Deliberation</dt>
                          <dd>
                            round {n.round}
                            {overlay.score.has(n.id) ? `, score ${overlay.score.get(n.id)}` : ''}
                            {overlay.chosen.has(n.id) ? ', on the chosen line' : ''}
                          </dd>
                        </div>
                      )}
                      {n.parent && <ForkFact edge={model.edges.find((e) => e.to === n.id)} />}
                    </dl>
                    <div className="row pad">
                      <button type="button" className="button small primary" disabled={!n.runId} onClick={() => open(n.id)}>
                        Open
                      </button>
                      {(model.children.get(n.id)?.length ?? 0) > 0 && (
                        <button
                          type="button"
                          className="button small"
                          onClick={() =>
                            setCollapsed((c) => {
                              const next = new Set(c);
                              if (next.has(n.id)) next.delete(n.id);
                              else next.add(n.id);
                              return next;
                            })
                          }
                        >
                          {collapsed.has(n.id) ? 'Expand subtree' : `Collapse subtree (${descendants(model, n.id).length})`}
                        </button>
                      )}
                    </div>
                  </section>
                ),
            )}
            {selected.length === 2 && (
              <button
                type="button"
                className="button primary"
                disabled={!canCompare}
                onClick={() => canCompare && setComparing([first.runId!, second.runId!])}
                title={canCompare ? undefined : 'Both worlds need a run to compare'}
              >
                Compare these two
              </button>
            )}
          </aside>
        </div>
      )}

      {comparing && (
        <CompareView
          api={api}
          runA={comparing[0]}
          runB={comparing[1]}
          labelA={first?.runId === comparing[0] ? first.name || shortId(first.id) : shortId(comparing[0])}
          labelB={second?.runId === comparing[1] ? second.name || shortId(second.id) : shortId(comparing[1])}
          onClose={() => setComparing(undefined)}
        />
      )}
    </div>
  );
}

/** ForkFact says how a selected world was forked: the kind of change, what it changed, the seed and where. */
function ForkFact({ edge }: { edge?: ForkEdge }) {
  if (!edge) return null;
  return (
    <>
      <div className="fact">
        <dt>Forked by</dt>
        <dd>
          <code>{edge.label}</code> at t={edge.at}
        </dd>
      </div>
      <div className="fact">
        <dt>It changed</dt>
        <dd className="mono fork-change" data-testid="fork-change">
          {edge.change ?? (edge.seed ? 'only the seed' : 'nothing in its state (an empty delta)')}
          {edge.seed && <span className="muted"> · seed {edge.seed}</span>}
        </dd>
      </div>
    </>
  );
}
