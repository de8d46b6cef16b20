// @vitest-environment jsdom
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { HistoryFilter, LedgerEvent } from '../bridge/types';
import { fakeApi } from '../test/fakeChannel';
import { event, runDetail, runState, worldRun, worldSpec } from '../test/fixtures';
import { TimelineView } from './TimelineView';
import { primeTimeline } from './prime';

afterEach(cleanup);


const OWN = 'run_own';
const PARENT = 'run_parent';
const history = [
  event({ seq: 1, pos: 1, stream: PARENT, type: 'world.initialized', reality: 'world_local' }),
  event({ seq: 2, pos: 2, stream: PARENT, type: 'world.step', reality: 'world_local', payload: { action: 'N' }, worldLocalTime: 1 }),
  event({ seq: 3, pos: 3, stream: PARENT, type: 'world.checkpoint', reality: 'world_local', payload: { checkpointId: 'cpt_1' }, worldLocalTime: 1 }),
  event({ seq: 1, pos: 7, stream: OWN, type: 'world.forked', reality: 'world_local', parentTime: 1, worldLocalTime: 1 }),
  event({ seq: 2, pos: 8, stream: OWN, type: 'world.step', reality: 'world_local', payload: { action: 'E' }, worldLocalTime: 2 }),
  event({ seq: 3, pos: 9, stream: OWN, type: 'world.event', reality: 'world_local', payload: { type: 'moved', to: [1, 0] }, worldLocalTime: 2 }),
];

/**
 * backend answers History, SearchHistory and HistoryTypes over a history as
 * the Go world service does: by position, with segments, searching
 * "TYPE STREAM #SEQ PAYLOAD" (eventAt makes large histories on demand).
 */
function backend(total: number, inherited: number, eventAt: (i: number) => LedgerEvent) {
  const segments = [
    { stream: PARENT, worldId: 'wld_parent', toSeq: inherited },
    { stream: OWN, worldId: 'wld_own', toSeq: total - inherited },
  ];
  const range = (from: number, to: number) => Array.from({ length: Math.max(0, Math.min(to, total) - from) }, (_, k) => eventAt(from + k));
  return {
    History: (_run: string, offset: number, limit: number) => {
      // -n: the page holding the n-th event from the end.
      const from = offset < 0 ? Math.floor(Math.max(total + offset, 0) / limit) * limit : offset;
      return { total, offset: from, events: range(from, from + limit), inherited, segments };
    },
    SearchHistory: (_run: string, f: HistoryFilter, from: number, limit: number) => {
      const re = f.regex ? new RegExp(f.text, 'i') : undefined;
      const matches = [];
      let next = from;
      for (; next < total && matches.length < limit; next++) {
        const e = eventAt(next);
        const line = `${e.type} ${e.stream} #${e.seq} ${JSON.stringify(e.payload)}`;
        const text = f.text === '' || (re ? re.test(line) : line.toLowerCase().includes(f.text.toLowerCase()));
        if ((f.types.length === 0 || f.types.includes(e.type)) && (f.reality === '' || e.reality === f.reality) && text) matches.push({ index: next, event: e });
      }
      return { total, inherited, matches, from, next };
    },
    HistoryTypes: () => {
      const counts = new Map<string, number>();
      for (const e of range(0, total)) counts.set(e.type, (counts.get(e.type) ?? 0) + 1);
      return [...counts].map(([type, count]) => ({ type, count }));
    },
    WorldDetail: () => ({ world: worldSpec({ name: 'grid / east' }), run: worldRun({ id: OWN }), runs: [], checkpoints: [] }),
  };
}

function setup() {
  const { api, channel } = fakeApi(backend(history.length, 3, (i) => history[i]!));
  render(<TimelineView api={api} runId={OWN} />);
  return channel;
}

const rows = () => screen.queryAllByTestId('timeline-row');
const seqs = () => rows().map((r) => `${r.textContent?.includes('world.') ? r.getAttribute('data-seq') : '?'}`);

describe('TimelineView', () => {
  it('shows the full history with the inherited prefix and the checkpoint marked', async () => {
    setup();
    await waitFor(() => expect(rows()).toHaveLength(6));
    expect(screen.getByText('6 events, 3 inherited')).toBeTruthy();
    const r = rows();
    expect(r[0]!.className).toContain('inherited');
    expect(r[3]!.className).not.toContain('inherited');
    expect(r[3]!.className).toContain('fork-point');
    expect(r[2]!.className).toContain('checkpoint');
    expect(within(r[2]!).getByRole('button', { name: 'Fork from here' })).toBeTruthy();
    // A payload cut at the row's edge (an 800 px window) reads whole in its tooltip.
    const payload = r[4]!.querySelectorAll('[role="cell"]');
    expect(payload[payload.length - 1]!.getAttribute('title')).toBe(payload[payload.length - 1]!.textContent);
  });

  it('filters by type, reality and text in the backend, and explains a broken regex', async () => {
    const channel = setup();
    await waitFor(() => expect(rows()).toHaveLength(6));

    await screen.findByRole('option', { name: 'world.step (2)' });
    fireEvent.change(screen.getByRole('combobox', { name: 'Event type' }), { target: { value: 'world.step' } });
    await waitFor(() => expect(seqs()).toEqual(['2', '2']));
    expect(screen.getByText('2 of 6 events match')).toBeTruthy();
    expect(channel.calls('SearchHistory')[0]).toEqual([OWN, { types: ['world.step'], reality: '', text: '', regex: false }, 0, 500]);

    fireEvent.change(screen.getByRole('combobox', { name: 'Event type' }), { target: { value: '' } });
    fireEvent.change(screen.getByRole('combobox', { name: 'Reality' }), { target: { value: 'external_real' } });
    await screen.findByText('No event matches the filters.');
    expect(rows()).toHaveLength(0);
    fireEvent.change(screen.getByRole('combobox', { name: 'Reality' }), { target: { value: 'all' } });

    fireEvent.change(screen.getByRole('searchbox', { name: 'Search events' }), { target: { value: 'moved' } });
    await waitFor(() => expect(seqs()).toEqual(['3']));

    fireEvent.click(screen.getByRole('checkbox', { name: 'regex' }));
    fireEvent.change(screen.getByRole('searchbox', { name: 'Search events' }), { target: { value: '"action":"[NE]"' } });
    await waitFor(() => expect(seqs()).toEqual(['2', '2']));
    fireEvent.change(screen.getByRole('searchbox', { name: 'Search events' }), { target: { value: '(' } });
    await waitFor(() => expect(screen.getByRole('alert').textContent).toMatch(/not a valid regular expression/));
  });

  it("says the router's and the critic's decisions of old and new task runs", async () => {
    const dec = { type: 'tool', payload: { step: 's0', tool: 'file_read', network: false }, requires_permission: false, confidence: 1, reason: 'Step "s0" is ready, so file_read runs it.' };
    const crit = { step: 's0', score: 0.6, explanation: 'The step succeeded but produced no output.', source: 'heuristic' };
    const task = [
      // Recorded before steps carried their decisions: one event a decision.
      event({ seq: 1, pos: 1, stream: OWN, type: 'decision.applied', payload: { source: 'router', decision: dec } }),
      event({ seq: 2, pos: 2, stream: OWN, type: 'step.started', payload: { step: 's0', attempt: 1, tool: 'file_read' } }),
      event({ seq: 3, pos: 3, stream: OWN, type: 'critic.scored', payload: crit }),
      // Recorded now: the start and the critique carry them.
      event({ seq: 4, pos: 4, stream: OWN, type: 'step.started', payload: { step: 's0', attempt: 1, tool: 'file_read', decision: dec } }),
      event({ seq: 5, pos: 5, stream: OWN, type: 'critic.scored', payload: { ...crit, decision: 'noop' } }),
      // Today: the result carries its critique (and ends a checkpoint).
      event({ seq: 6, pos: 6, stream: OWN, type: 'step.finished', payload: { step: 's0', attempt: 1, ok: true, critique: { ...crit, step: undefined, decision: 'noop' }, checkpointId: 'ckp_7' } }),
    ];
    const { api } = fakeApi(backend(task.length, 0, (i) => task[i]!));
    render(<TimelineView api={api} runId={OWN} />);
    await waitFor(() => expect(rows()).toHaveLength(6));
    const decisionIn = async (i: number) => {
      fireEvent.click(rows()[i]!);
      const detail = await screen.findByRole('complementary', { name: 'Event' });
      await waitFor(() => expect(within(detail).getByRole('heading').textContent).toBe(task[i]!.type));
      const fact = within(detail).queryByText('Decision');
      return fact ? fact.nextElementSibling?.textContent : undefined;
    };
    const router = 'router: tool (confidence 1) — Step "s0" is ready, so file_read runs it.';
    const critic = "critic (rule of thumb, not a model's judgement): noop (confidence 0.6) — The step succeeded but produced no output.";
    expect(await decisionIn(0)).toBe(router);
    expect(await decisionIn(1)).toBeUndefined();
    expect(await decisionIn(2)).toBeUndefined();
    expect(await decisionIn(3)).toBe(router);
    expect(await decisionIn(4)).toBe(critic);
    expect(await decisionIn(5)).toBe(critic);
    // The result that ends a checkpoint is marked as one, so a fork can start there.
    expect(rows()[5]!.className).toMatch(/\bcheckpoint\b/);
  });

  it("names the event's clocks: parent time, deliberation index, world-local time", async () => {
    const { api } = fakeApi(backend(history.length, 3, (i) => history[i]!));
    render(<TimelineView api={api} runId={OWN} />);
    await waitFor(() => expect(rows()).toHaveLength(history.length));
    fireEvent.click(rows().find((r) => r.textContent?.includes('world.forked'))!);
    const detail = await screen.findByRole('complementary', { name: 'Event' });
    expect(within(detail).getByTestId('event-clocks').textContent).toBe('parent time 1 · deliberation index 0 · world-local time 1');
  });

  it('says which round of deliberation chose a step, and what it spent', async () => {
    const roundEvent = 'evt_round_one';
    const own = [
      event({ seq: 1, pos: 1, stream: OWN, type: 'world.initialized', reality: 'world_local' }),
      event({ seq: 2, pos: 2, stream: OWN, type: 'world.step', reality: 'world_local', payload: { action: 'N' }, worldLocalTime: 1 }),
      event({ seq: 3, pos: 3, stream: OWN, type: 'world.step', reality: 'world_local', payload: { action: 'S' }, worldLocalTime: 2, causationId: roundEvent }),
      event({ seq: 4, pos: 4, stream: OWN, type: 'world.event', reality: 'world_local', payload: { type: 'moved' }, worldLocalTime: 2, causationId: 'evt_step_three' }),
    ];
    const round = {
      eventId: roundEvent,
      deliberationIndex: 1,
      parentRunId: OWN,
      parentWorldId: 'wld_own',
      checkpointId: 'cpt_1',
      parentTime: 1,
      strategy: 'beam',
      depth: 10,
      seeds: [],
      budget: { branches: 200, used: 180, steps: 400, deduplicated: 12, depth: 10, wallMs: 900, stopped: 'exhausted' },
      candidates: [{ action: 'S', score: -12, mean: -12, visits: 1, line: ['S'], branches: [], bestBranches: [] }],
      chosen: 'S',
    };
    const { api, channel } = fakeApi({
      ...backend(own.length, 0, (i) => own[i]!),
      WorldDetail: () => ({ world: worldSpec({ name: 'grid', domain: 'simulated' }), run: worldRun({ id: OWN }), runs: [], checkpoints: [] }),
      Deliberations: () => [round],
    });
    render(<TimelineView api={api} runId={OWN} />);
    await waitFor(() => expect(rows()).toHaveLength(4));
    await waitFor(() => expect(within(rows()[2]!).getByText('round 1')).toBeTruthy());
    expect(within(rows()[1]!).queryByText(/^round/)).toBeNull();
    expect(within(rows()[3]!).queryByText(/^round/)).toBeNull();
    expect(channel.calls('Deliberations')).toEqual([[OWN]]);

    fireEvent.click(rows()[2]!);
    const detail = await screen.findByRole('complementary', { name: 'Event' });
    expect(within(detail).getByTestId('cause').textContent).toBe(
      'deliberation round 1 at t=1 — beam, 180 of 200 branches (searched everything within depth 10): chose "S", score -12.00 (higher is better; the program’s score()). The round on the world',
    );
    // Another cause is named by its event's id.
    fireEvent.click(rows()[3]!);
    await waitFor(() => expect(within(detail).getByRole('heading').textContent).toBe('world.event'));
    expect(within(detail).queryByTestId('cause')).toBeNull();
    expect(within(detail).getByText('Caused by').nextElementSibling?.textContent).toBe('evt_…ep_three');
  });

  it('numbers events across the fork line, jumps to a number and says when the filters hide it', async () => {
    setup();
    await waitFor(() => expect(rows()).toHaveLength(6));
    // Each stream's seq starts again at the fork; the history's numbers go on.
    expect(rows().map((r) => r.getAttribute('data-seq'))).toEqual(['1', '2', '3', '1', '2', '3']);
    expect(rows().map((r) => r.querySelector('[role="cell"]')!.textContent)).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(rows()[3]!.querySelector('[role="cell"]')!.getAttribute('title')).toBe(`${OWN} seq 1`);
    fireEvent.change(screen.getByRole('textbox', { name: 'Jump to event #' }), { target: { value: '#6' } });
    fireEvent.click(screen.getByRole('button', { name: 'Jump' }));
    await waitFor(() => expect(rows().find((r) => r.className.includes('selected'))?.textContent).toContain('world.event'));
    expect(screen.getByRole('complementary', { name: 'Event' })).toBeTruthy();

    fireEvent.change(screen.getByRole('combobox', { name: 'Event type' }), { target: { value: 'world.step' } });
    await waitFor(() => expect(seqs()).toEqual(['2', '2']));
    fireEvent.click(screen.getByRole('button', { name: 'Jump' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe('Event #6 is hidden by the filters; clear them to see it.'));
    fireEvent.change(screen.getByRole('textbox', { name: 'Jump to event #' }), { target: { value: '99' } });
    fireEvent.click(screen.getByRole('button', { name: 'Jump' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe('This history has 6 events: #99 is past its end.'));
    fireEvent.change(screen.getByRole('textbox', { name: 'Jump to event #' }), { target: { value: '5' } });
    fireEvent.click(screen.getByRole('button', { name: 'Jump' }));
    await waitFor(() => expect(rows().find((r) => r.className.includes('selected'))?.textContent).toContain('world.step'));
  });

  it('appends live events of the run', async () => {
    const channel = setup();
    await waitFor(() => expect(rows()).toHaveLength(6));
    channel.emit('ledger:events', [event({ seq: 4, pos: 20, stream: OWN, type: 'world.completed', reality: 'world_local' }), event({ seq: 9, pos: 21, stream: 'run_x' })]);
    await waitFor(() => expect(rows()).toHaveLength(7));
  });

  it('opens the delta editor from a checkpoint', async () => {
    setup();
    await waitFor(() => expect(rows()).toHaveLength(6));
    fireEvent.click(within(rows()[2]!).getByRole('button', { name: 'Fork from here' }));
    expect(screen.getByRole('dialog', { name: 'Fork from checkpoint' })).toBeTruthy();
  });

  it('forks a task run with a plan, pre-filled with its plan at that checkpoint, never with worlds and seeds', async () => {
    const task = [
      event({ seq: 1, pos: 1, stream: OWN, type: 'task.received' }),
      event({ seq: 2, pos: 2, stream: OWN, type: 'run.checkpoint', payload: { checkpointId: 'cpt_task' } }),
    ];
    const { api, channel } = fakeApi({
      ...backend(task.length, 0, (i) => task[i]!),
      WorldDetail: () => ({ world: worldSpec({ name: 'task', domain: 'real' }), run: worldRun({ id: OWN }), runs: [], checkpoints: [] }),
      // The run's plan now has a step a review added; at the checkpoint it had three.
      RunDetail: () => runDetail({ state: runState({ graph: { nodes: [...runState().graph!.nodes, { id: 'added', kind: 'tool', tool: 'file_read', args: {}, depends_on: [] }] } }) }),
      RunAtCheckpoint: (id: string) => (id === 'cpt_task' ? runState() : null),
      ValidatePlan: () => ({ valid: true, problems: [], steps: 3 }),
      Fork: () => ({ fork: { id: 'frk_1' }, world: { id: 'wld_c', domain: 'real' }, run: { id: 'run_child' } }),
    });
    render(<TimelineView api={api} runId={OWN} />);
    await waitFor(() => expect(rows()).toHaveLength(2));
    fireEvent.click(within(rows()[1]!).getByRole('button', { name: 'Fork from here' }));
    const dialog = await screen.findByRole('dialog', { name: 'Fork this run with an edited plan' });
    expect(within(dialog).queryByText(/seed|world|delta/i)).toBeNull();
    // It starts where the user chose, not at the run's latest checkpoint.
    expect(within(dialog).getByText(/^The new run starts from the checkpoint at event #2\./)).toBeTruthy();
    const plan = within(dialog).getByRole('textbox', { name: 'Plan (JSON)' }) as HTMLTextAreaElement;
    expect(JSON.parse(plan.value).nodes).toHaveLength(3);
    expect((within(dialog).getByRole('textbox', { name: 'Name of the new run' }) as HTMLInputElement).value).toBe('Clean the build folder (edited plan)');
    expect(plan.value).not.toContain('"added"');
    await within(dialog).findByText(/^The plan at that checkpoint, unchanged\./);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Fork with this plan' }));
    await waitFor(() => expect(channel.calls('Fork')).toHaveLength(1));
    // An unchanged plan is sent as {}: the child keeps the plan.
    expect(channel.calls('Fork')[0]![0]).toMatchObject({ checkpointId: 'cpt_task', parentRunId: OWN, divergence: 'plan_edit', delta: '{}' });
    await waitFor(() => expect(window.location.hash).toBe('#/runs/run_child'));
    window.location.hash = '';
  });

  it('reads a million-event history page by page, drawing only the rows in view', async () => {
    const total = 1_000_000;
    const at = (i: number) =>
      i < 1_000
        ? event({ seq: i + 1, pos: i + 1, stream: PARENT, type: 'world.step', reality: 'world_local', worldLocalTime: i })
        : event({ seq: i - 999, pos: i + 1, stream: OWN, type: i % 10 === 0 ? 'world.checkpoint' : 'world.step', reality: 'world_local', worldLocalTime: i, payload: i % 10 === 0 ? { checkpointId: `cpt_${i}` } : { n: i } });
    const { api, channel } = fakeApi({ ...backend(total, 1_000, at), HistoryTypes: () => [{ type: 'world.step', count: 900_000 }] });
    render(<TimelineView api={api} runId={OWN} />);
    // It opens at the end: the newest event is the last row drawn.
    await waitFor(() => expect(rows().at(-1)?.getAttribute('data-seq')).toBe(String(total - 1_000)));
    expect(screen.getByText('1,000,000 events, 1,000 inherited')).toBeTruthy();
    // Only a screenful of rows is in the DOM, and only the pages needed were read:
    // the oldest (the total, segments and clock axis) and those at the end, where the view opens.
    expect(rows().length).toBeLessThan(60);
    // The oldest event, the last page and the page a screenful above the end, in one round trip.
    const read = channel.calls('History').map((c) => [c[1], c[2]]);
    expect(read.slice(0, 3)).toEqual([
      [0, 1],
      [-1, 500],
      [-41, 500],
    ]);
    expect(read.length).toBeLessThanOrEqual(3);

    // Scrolled to the middle, the rows there are read and drawn, and still only a screenful.
    const scroller = screen.getByRole('table', { name: 'Events' }).querySelector('.tl-scroll')!;
    Object.defineProperty(scroller, 'scrollTop', { value: 7_500_000, configurable: true, writable: true });
    fireEvent.scroll(scroller);
    await waitFor(() => expect(rows().length).toBeGreaterThan(20));
    const middle = rows().map((r) => Number(r.getAttribute('data-seq')));
    expect(Math.min(...middle)).toBeGreaterThan(400_000);
    expect(Math.max(...middle)).toBeLessThan(600_000);
    expect(rows().length + screen.queryAllByTestId('timeline-pending').length).toBeLessThan(60);

    // A jump far back reads the page there and shows the event.
    fireEvent.change(screen.getByRole('textbox', { name: 'Jump to event #' }), { target: { value: '501000' } });
    fireEvent.click(screen.getByRole('button', { name: 'Jump' }));
    const detail = await screen.findByRole('complementary', { name: 'Event' });
    await waitFor(() => expect(detail.textContent).toContain('seq 500000 · event #501,000 of the history'));
    expect(channel.calls('History').some((c) => (c[1] as number) <= 500_999 && (c[1] as number) + 500 > 500_999)).toBe(true);
    await waitFor(() => expect(rows().find((r) => r.className.includes('selected'))?.getAttribute('data-seq')).toBe('500000'));
    expect(rows().length).toBeLessThan(60);
  });

  it('draws the end of a history whose last page holds few events after one round trip', async () => {
    // 1,000,003 events: the last page holds 3, the screenful above them is on the page before.
    const total = 1_000_003;
    const at = (i: number) => event({ seq: i + 1, pos: i + 1, stream: OWN, type: 'world.step', reality: 'world_local', worldLocalTime: i });
    const { api, channel } = fakeApi({ ...backend(total, 0, at), HistoryTypes: () => [{ type: 'world.step', count: total }] });
    render(<TimelineView api={api} runId={OWN} />);
    await waitFor(() => expect(rows().at(-1)?.getAttribute('data-seq')).toBe(String(total)));
    // A screenful is drawn: the 3 events of the last page and those above them.
    expect(rows().length).toBeGreaterThan(20);
    const read = channel.calls('History').map((c) => [c[1], c[2]]);
    expect(read).toEqual([
      [0, 1],
      [-1, 500],
      [-41, 500],
    ]);
  });

  it('takes the first read started at start-up, with the live events committed before it drew', async () => {
    const total = 1_203;
    const at = (i: number) => event({ seq: i + 1, pos: i + 1, stream: OWN, type: 'world.step', reality: 'world_local', worldLocalTime: i });
    const { api, channel } = fakeApi({ ...backend(total, 0, at), HistoryTypes: () => [{ type: 'world.step', count: total }] });
    // main.tsx primes when the window opens on a timeline; the screen's code comes later.
    primeTimeline(api, OWN);
    await waitFor(() => expect(channel.calls('History')).toHaveLength(3));
    // An event committed after that read, before the screen listens; another run's is not kept.
    channel.emit('ledger:events', [event({ seq: total + 1, pos: total + 1, stream: OWN, type: 'world.completed', reality: 'world_local' }), event({ seq: 9, pos: total + 2, stream: 'run_x' })]);
    render(<TimelineView api={api} runId={OWN} />);
    await waitFor(() => expect(rows().at(-1)?.getAttribute('data-seq')).toBe(String(total + 1)));
    // The screen read nothing again.
    expect(channel.calls('History').map((c) => [c[1], c[2]])).toEqual([
      [0, 1],
      [-1, 500],
      [-41, 500],
    ]);
    // A second opening of the timeline reads for itself.
    cleanup();
    render(<TimelineView api={api} runId={OWN} />);
    await waitFor(() => expect(rows().at(-1)?.getAttribute('data-seq')).toBe(String(total)));
    expect(channel.calls('History').length).toBeGreaterThanOrEqual(6);
  });

  it('searches a long history from its oldest event, a screenful at a time', async () => {
    const total = 100_000;
    const at = (i: number) => event({ seq: i + 1, pos: i + 1, stream: OWN, type: 'world.step', reality: 'world_local', payload: { n: i } });
    const { api, channel } = fakeApi({ ...backend(total, 0, at), HistoryTypes: () => [{ type: 'world.step', count: total }] });
    render(<TimelineView api={api} runId={OWN} />);
    await waitFor(() => expect(rows().at(-1)?.getAttribute('data-seq')).toBe(String(total)));
    fireEvent.change(await screen.findByRole('combobox', { name: 'Event type' }), { target: { value: 'world.step' } });
    // Every event matches: the list shows the first ones, and the search stops after a screenful or so.
    await waitFor(() => expect(rows()[0]?.getAttribute('data-seq')).toBe('1'));
    await screen.findByText(/^500 matches in the first 500 of 100,000 events$/);
    expect(channel.calls('SearchHistory')).toHaveLength(1);
  });

  it('streams a search with its progress, stops it, and finds more after the stop', async () => {
    const total = 100_000;
    const SLICE = 10_000;
    const at = (i: number) => event({ seq: i + 1, pos: i + 1, stream: OWN, type: 'world.step', reality: 'world_local', payload: i % 1000 === 0 ? { alarm: i } : { n: i } });
    const base = backend(total, 0, at);
    // Each call searches one slice of positions, as the Go service answers
    // after a slice of time, and waits until the test lets it answer.
    const gates: (() => void)[] = [];
    const { api, channel } = fakeApi({
      ...base,
      HistoryTypes: () => [{ type: 'world.step', count: total }],
      SearchHistory: async (run: string, f: HistoryFilter, from: number) => {
        await new Promise<void>((resolve) => gates.push(resolve));
        const m = base.SearchHistory(run, f, from, SLICE);
        return { ...m, matches: m.matches.filter((x) => x.index < from + SLICE), next: Math.min(from + SLICE, total) };
      },
    });
    const release = async () => {
      await waitFor(() => expect(gates.length).toBeGreaterThan(0));
      act(() => gates.shift()!());
    };
    render(<TimelineView api={api} runId={OWN} />);
    await waitFor(() => expect(rows().at(-1)?.getAttribute('data-seq')).toBe(String(total)));
    fireEvent.change(screen.getByRole('searchbox', { name: 'Search events' }), { target: { value: 'ALARM' } });

    // The first slice's matches are on screen while the search goes on, with how far it got.
    await release();
    await waitFor(() => expect(screen.getByTestId('search-status').textContent).toBe('10 matches so far, 10,000 of 100,000 events searched…'));
    expect(rows()[0]?.getAttribute('data-seq')).toBe('1');
    expect((screen.getByRole('progressbar', { name: 'Searched of the history' }) as HTMLProgressElement).value).toBe(10_000);

    // Stop: the call in flight lands, and no other is made.
    fireEvent.click(screen.getByRole('button', { name: 'Stop' }));
    await release();
    await waitFor(() => expect(screen.getByTestId('search-status').textContent).toBe('Stopped: 20 matches in the first 20,000 of 100,000 events'));
    expect(screen.queryByRole('progressbar')).toBeNull();
    const calls = channel.calls('SearchHistory').length;
    fireEvent.scroll(document.querySelector('.tl-scroll')!, { target: { scrollTop: 10_000 } });
    await new Promise((r) => setTimeout(r, 50));
    expect(channel.calls('SearchHistory')).toHaveLength(calls);

    // Find more goes on from where it stopped, to the end.
    fireEvent.click(screen.getByRole('button', { name: 'Find more' }));
    for (let i = 2; i < 10; i++) await release();
    await waitFor(() => expect(screen.getByTestId('search-status').textContent).toBe('100 of 100,000 events match'));
    expect(channel.calls('SearchHistory').map((c) => c[2])).toEqual(Array.from({ length: 10 }, (_, k) => k * SLICE));
    expect(screen.queryByRole('button', { name: 'Find more' })).toBeNull();
  });
});
