// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as layoutModule from '../lib/layout';
import { fakeApi } from '../test/fakeChannel';
import type { Lineage, LineageOutline } from '../bridge/types';
import { event, lineage } from '../test/fixtures';
import { LineageView } from './LineageView';

vi.mock('../lib/layout', async (importOriginal) => {
  const real = await importOriginal<typeof layoutModule>();
  return { ...real, layoutDag: vi.fn(real.layoutDag) };
});

afterEach(() => {
  cleanup();
  window.location.hash = '';
});

const diff = {
  a: 'run_a',
  b: 'run_b',
  commonWorldId: 'wld_root',
  sharedEvents: 5,
  forkPoint: { stream: 'run_root', worldId: 'wld_root', toSeq: 5 },
  stateA: { pos: [3, 4], params: { noise: 0.2 } },
  stateB: { pos: [0, 6], params: { noise: 0.2 } },
  stateChanges: [
    { path: '/pos/0', kind: 'changed', a: 3, b: 0 },
    { path: '/pos/1', kind: 'changed', a: 4, b: 6 },
  ],
  eventsA: [event({ seq: 1, pos: 10, stream: 'run_a', type: 'world.forked' }), event({ seq: 2, pos: 11, stream: 'run_a', type: 'world.step', payload: { action: 'E' } })],
  eventsB: [event({ seq: 1, pos: 12, stream: 'run_b', type: 'world.forked' })],
  eventsATotal: 2,
  eventsBTotal: 1,
};

function setup() {
  const { api, channel } = fakeApi({ LineageOutline: () => outline(lineage()), Diff: () => diff });
  render(<LineageView api={api} />);
  return channel;
}

const node = (name: RegExp) => screen.getByRole('button', { name });

/** outline is what the backend's LineageOutline sends for a lineage. */
function outline(l: Lineage): LineageOutline {
  return {
    worlds: l.nodes.map((n) => ({
      id: n.world.id,
      name: n.world.name,
      domain: n.world.domain,
      createdAt: n.world.createdAt,
      runs: n.runs,
      ...(n.world.parentWorldId ? { parent: n.world.parentWorldId } : {}),
      ...(n.latestRun ? { runId: n.latestRun.id, status: n.latestRun.status } : {}),
    })),
    // What each fork changed, as the backend sums it up (world.OutlineFork.Change).
    forks: l.edges.map((e) => ({
      id: e.fork.id,
      from: e.fork.parentWorldId,
      to: e.fork.childWorldId,
      divergence: e.fork.divergence,
      at: e.at,
      ...(e.fork.divergence === 'state_patch' ? { change: '{"pos":[0,6],"note":"a long patch"}' } : { seed: 'derive' as const }),
    })),
  };
}

describe('LineageView', () => {
  it('draws every world with its status and each fork labelled by its divergence', async () => {
    setup();
    const graph = await screen.findByRole('group', { name: 'Lineage graph' });
    expect(within(graph).getAllByRole('button')).toHaveLength(3);
    // Open simulated runs that no batch of steps moves are idle, not running.
    expect(node(/^grid \/ noisy, simulated, idle$/)).toBeTruthy();
    expect(node(/^grid \/ calm, simulated, failed$/)).toBeTruthy();
    expect(within(graph).getByText('parameter_change')).toBeTruthy();
    expect(within(graph).getByText('state_patch')).toBeTruthy();
  });

  it('says a world is running only while a batch of its steps is computed', async () => {
    const at = '2025-03-12T14:00:00Z';
    const { api } = fakeApi({
      LineageOutline: () => ({
        worlds: [
          { id: 'wld_a', name: 'a', domain: 'simulated', createdAt: at, runs: 1, runId: 'run_a', status: 'running', stepping: true },
          { id: 'wld_b', name: 'b', domain: 'simulated', createdAt: at, runs: 1, runId: 'run_b', status: 'running', parent: 'wld_a' },
        ],
        forks: [{ id: 'frk_1', from: 'wld_a', to: 'wld_b', divergence: 'seed_change', at: 0 }],
      }),
    });
    render(<LineageView api={api} />);
    expect(await screen.findByRole('button', { name: 'a, simulated, running' })).toBeTruthy();
    expect(node(/^b, simulated, idle$/).getAttribute('class')).toContain('wstatus-idle');
  });

  it('counts one fork as "1 fork"', async () => {
    const at = '2025-03-12T14:00:00Z';
    const { api } = fakeApi({
      LineageOutline: () => ({
        worlds: [
          { id: 'wld_a', name: 'a', domain: 'simulated', createdAt: at, runs: 1 },
          { id: 'wld_b', name: 'b', domain: 'simulated', createdAt: at, runs: 1, parent: 'wld_a' },
        ],
        forks: [{ id: 'frk_1', from: 'wld_a', to: 'wld_b', divergence: 'seed_change', at: 0 }],
      }),
    });
    render(<LineageView api={api} />);
    expect(await screen.findByText(/^2 worlds, 1 fork( ·|$)/)).toBeTruthy();
  });

  it('shows what each fork changed on its edge and in the selected world', async () => {
    setup();
    const graph = await screen.findByRole('group', { name: 'Lineage graph' });
    const changes = within(graph).getAllByTestId('edge-change');
    // Under the edge, the change cut to the gap; whole in the tooltip.
    expect(changes.map((c) => c.textContent!.replace(c.querySelector('title')!.textContent!, '')).sort()).toEqual(['seed derive', '{"pos":[0,6],"n…']);
    const patch = changes.find((c) => c.textContent!.includes('pos'))!;
    expect(patch.querySelector('title')!.textContent).toMatch(/^state_patch · \{"pos":\[0,6\],"note":"a long patch"\} · at t=\d+$/);
    fireEvent.click(node(/^grid \/ calm,/));
    const card = await screen.findByRole('region', { name: /^Selected world/ });
    expect(within(card).getByTestId('fork-change').textContent).toBe('{"pos":[0,6],"note":"a long patch"}');
    fireEvent.click(node(/^grid \/ noisy,/));
    await waitFor(() => expect(within(screen.getByRole('region', { name: /^Selected world/ })).getByTestId('fork-change').textContent).toBe('only the seed · seed derive'));
  });

  it('selects two worlds and compares them side by side, without laying the graph out again', async () => {
    vi.mocked(layoutModule.layoutDag).mockClear();
    const channel = setup();
    await screen.findByRole('group', { name: 'Lineage graph' });
    const layouts = vi.mocked(layoutModule.layoutDag).mock.calls.length;
    expect(layouts).toBe(1);

    fireEvent.click(node(/^grid \/ noisy,/));
    expect(node(/^grid \/ noisy,/).getAttribute('aria-pressed')).toBe('true');
    expect(screen.queryByRole('button', { name: 'Compare these two' })).toBeNull();
    fireEvent.click(node(/^grid \/ calm,/), { shiftKey: true });
    expect(node(/^grid \/ calm,/).getAttribute('aria-pressed')).toBe('true');
    fireEvent.click(screen.getByRole('button', { name: 'Compare these two' }));

    const compare = await screen.findByTestId('compare');
    await within(compare).findByText('/pos/0');
    expect(channel.calls('Diff')).toEqual([['run_a', 'run_b']]);
    expect(within(compare).getByText('5 shared events, diverging after run_root #5')).toBeTruthy();
    expect(within(compare).getByRole('tree', { name: 'State of grid / noisy' })).toBeTruthy();
    expect(within(compare).getByRole('tree', { name: 'State of grid / calm' })).toBeTruthy();
    const events = within(compare).getByRole('table', { name: 'Event diff' });
    // From the fork point (each side's world.forked), then by world time.
    expect(within(events).getAllByRole('row')).toHaveLength(3); // header + t=0 (both forked) + the step of noisy
    expect(within(compare).getByTestId('event-diff-summary').textContent).toMatch(/; \d of \d world times differ$/);
    expect(within(compare).getByTestId('state-times').textContent).toMatch(/^Each side's latest state: grid \/ noisy at t=\d+, grid \/ calm at t=\d+/);
    expect(vi.mocked(layoutModule.layoutDag).mock.calls.length).toBe(layouts);
  });

  it('compares the two runs an address names (ducklm open compare), their worlds selected', async () => {
    const { api, channel } = fakeApi({ LineageOutline: () => outline(lineage()), Diff: () => diff });
    render(<LineageView api={api} compare={['run_a', 'run_b']} />);
    const compare = await screen.findByTestId('compare');
    await within(compare).findByText('/pos/0');
    expect(channel.calls('Diff')).toEqual([['run_a', 'run_b']]);
    expect(within(compare).getByRole('heading', { level: 2 }).textContent).toBe('Compare grid / noisy and grid / calm');
    // The keyboard is where the comparison is: focus on it, Tab reaches Close first.
    expect(document.activeElement).toBe(compare);
    expect(compare.querySelector('button, a[href], input, select, textarea, [tabindex]:not([tabindex="-1"])')?.textContent).toBe('Close');
    expect(node(/^grid \/ noisy,/).getAttribute('aria-pressed')).toBe('true');
    expect(node(/^grid \/ calm,/).getAttribute('aria-pressed')).toBe('true');
  });

  it('compares the two states at a world time the user picks, and back to the latest', async () => {
    const at = {
      at: 1,
      a: { runId: 'run_a', time: 1, state: { pos: [1, 4], params: { noise: 0.2 } } },
      b: { runId: 'run_b', time: 1, state: { pos: [0, 5], params: { noise: 0.2 } } },
      changes: [
        { path: '/pos/0', kind: 'changed', a: 1, b: 0 },
        { path: '/pos/1', kind: 'changed', a: 4, b: 5 },
      ],
    };
    const { api, channel } = fakeApi({ LineageOutline: () => outline(lineage()), Diff: () => diff, StatesAt: () => at });
    render(<LineageView api={api} compare={['run_a', 'run_b']} />);
    const compare = await screen.findByTestId('compare');
    await within(compare).findByText('/pos/0');
    const time = within(compare).getByRole('spinbutton', { name: 'World time to compare the states at' });
    fireEvent.change(time, { target: { value: '1' } });
    fireEvent.click(within(compare).getByRole('button', { name: 'Show both at this time' }));
    await waitFor(() => expect(within(compare).getByTestId('state-times').textContent).toBe('Both states at world time t=1.'));
    expect(channel.calls('StatesAt')).toEqual([['run_a', 'run_b', 1]]);
    const changes = within(compare).getByRole('table', { name: 'State changes' });
    expect(within(changes).getAllByRole('row')[2]?.textContent).toBe('/pos/145');
    // Back to each side's latest state.
    fireEvent.click(within(compare).getByRole('button', { name: 'Latest states' }));
    await waitFor(() => expect(within(compare).getByTestId('state-times').textContent).toMatch(/^Each side's latest state/));
    expect(within(within(compare).getByRole('table', { name: 'State changes' })).getAllByRole('row')[2]?.textContent).toBe('/pos/146');
  });

  it('says when a side stopped before the chosen time', async () => {
    const at = {
      at: 9,
      a: { runId: 'run_a', time: 9, state: { pos: [1, 4] } },
      b: { runId: 'run_b', time: 6, state: { pos: [1, 4] } },
      changes: [],
    };
    const { api } = fakeApi({ LineageOutline: () => outline(lineage()), Diff: () => diff, StatesAt: () => at });
    render(<LineageView api={api} compare={['run_a', 'run_b']} />);
    const compare = await screen.findByTestId('compare');
    await within(compare).findByText('/pos/0');
    fireEvent.change(within(compare).getByRole('spinbutton', { name: 'World time to compare the states at' }), { target: { value: '9' } });
    fireEvent.click(within(compare).getByRole('button', { name: 'Show both at this time' }));
    await waitFor(() =>
      expect(within(compare).getByTestId('state-times').textContent).toBe('At world time t=9: grid / noisy at t=9, grid / calm at t=6, its last step before t=9.'),
    );
    expect(within(compare).getByText(/identical/)).toBeTruthy();
  });

  it('closes Compare without calling what scrollIntoView returns (a Promise in Chromium) as a cleanup', async () => {
    // Chromium's scrollIntoView returns a Promise; an effect that returned it
    // made React call it on Close: "TypeError: l is not a function", a blank page.
    const scroll = vi.fn(() => Promise.resolve());
    const original = Element.prototype.scrollIntoView;
    Element.prototype.scrollIntoView = scroll as unknown as typeof original;
    const errors = vi.spyOn(console, 'error');
    try {
      setup();
      await screen.findByRole('group', { name: 'Lineage graph' });
      fireEvent.click(node(/^grid \/ noisy,/));
      fireEvent.click(node(/^grid \/ calm,/), { shiftKey: true });
      fireEvent.click(screen.getByRole('button', { name: 'Compare these two' }));
      const compare = await screen.findByTestId('compare');
      expect(scroll).toHaveBeenCalled();
      fireEvent.click(within(compare).getByRole('button', { name: 'Close' }));
      await waitFor(() => expect(screen.queryByTestId('compare')).toBeNull());
      expect(screen.getByRole('group', { name: 'Lineage graph' })).toBeTruthy();
      expect(errors).not.toHaveBeenCalled();
    } finally {
      Element.prototype.scrollIntoView = original;
      errors.mockRestore();
    }
  });

  it('collapses a subtree and finds worlds by name', async () => {
    setup();
    await screen.findByRole('group', { name: 'Lineage graph' });
    fireEvent.click(node(/^grid, simulated/));
    fireEvent.click(screen.getByRole('button', { name: 'Collapse subtree (2)' }));
    await waitFor(() => expect(screen.queryByRole('button', { name: /^grid \/ noisy,/ })).toBeNull());
    expect(screen.getByText('+2')).toBeTruthy();

    fireEvent.change(screen.getByRole('searchbox', { name: 'Search worlds by id or name' }), { target: { value: 'calm' } });
    expect(screen.getByText('1 of 1')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Find' }));
    // The match comes back out of the collapsed subtree, selected, with why it matches.
    await waitFor(() => expect(node(/^grid \/ calm,/).getAttribute('aria-pressed')).toBe('true'));
    expect(screen.getByTestId('find-why').textContent).toBe('grid / calm: its name grid / calm holds “calm”');
    expect(screen.getByTestId('find-why').querySelector('mark')!.textContent).toBe('calm');
  });

  it('says why each match matches and moves between matches with the arrow keys', async () => {
    setup();
    await screen.findByRole('group', { name: 'Lineage graph' });
    const box = screen.getByRole('searchbox', { name: 'Search worlds by id or name' });
    fireEvent.change(box, { target: { value: 'grid' } });
    // Before a match is shown, the line says what Find looks in.
    expect(screen.getByTestId('find-why').textContent).toMatch(/^Finds worlds whose name, world id or run id holds the text/);
    const selected = () => screen.getAllByRole('button', { pressed: true }).map((b) => b.getAttribute('aria-label')!.split(',')[0]);
    fireEvent.keyDown(box, { key: 'ArrowDown' });
    await waitFor(() => expect(screen.getByTestId('find-count').textContent).toBe('1 of 3'));
    const first = selected();
    fireEvent.keyDown(box, { key: 'ArrowDown' });
    await waitFor(() => expect(screen.getByTestId('find-count').textContent).toBe('2 of 3'));
    expect(selected()).not.toEqual(first);
    fireEvent.keyDown(box, { key: 'ArrowUp' });
    await waitFor(() => expect(screen.getByTestId('find-count').textContent).toBe('1 of 3'));
    expect(selected()).toEqual(first);
    // A match by id shows the id with the text marked.
    const id = screen.getByRole('region', { name: /^Selected world/ }).querySelector('dd.mono')!.getAttribute('title')!;
    fireEvent.change(box, { target: { value: id.slice(-6) } });
    fireEvent.keyDown(box, { key: 'Enter' });
    await waitFor(() => expect(screen.getByTestId('find-why').textContent).toMatch(new RegExp(`its world id ${id} holds “${id.slice(-6)}”$`)));
    expect(screen.getByTestId('find-why').querySelector('mark')!.textContent).toBe(id.slice(-6));
  });

  it('moves between worlds with the arrow keys: Right to a child, Down to its sibling, Left to the parent', async () => {
    setup();
    const graph = await screen.findByRole('group', { name: 'Lineage graph' });
    const names = within(graph)
      .getAllByRole('button')
      .map((b) => b.getAttribute('aria-label')!.split(',')[0]!);
    const root = names.find((n) => !n.includes(' / '))!;
    const focusedName = () => document.activeElement?.getAttribute('aria-label')?.split(',')[0];
    const pressed = () => within(graph).getAllByRole('button', { pressed: true }).map((b) => b.getAttribute('aria-label')!.split(',')[0]);
    const rootNode = within(graph).getByRole('button', { name: new RegExp(`^${root},`) });
    rootNode.focus();
    fireEvent.keyDown(rootNode, { key: 'ArrowRight' });
    const child = focusedName()!;
    expect(child).toMatch(/ \/ /);
    expect(pressed()).toEqual([child]);
    fireEvent.keyDown(document.activeElement!, { key: 'ArrowDown' });
    const sibling = focusedName()!;
    expect(sibling).not.toBe(child);
    expect(pressed()).toEqual([sibling]);
    fireEvent.keyDown(document.activeElement!, { key: 'ArrowUp' });
    expect(focusedName()).toBe(child);
    fireEvent.keyDown(document.activeElement!, { key: 'ArrowLeft' });
    expect(focusedName()).toBe(root);
    expect(pressed()).toEqual([root]);
  });

  it('scrolls with the wheel and zooms with Ctrl and the wheel', async () => {
    setup();
    const graph = await screen.findByRole('group', { name: 'Lineage graph' });
    const canvas = graph.closest('.lineage-canvas')!;
    const zoom = () => within(canvas as HTMLElement).getByText(/% · \d+ drawn$/).textContent!.split('%')[0];
    const moved = () => graph.querySelector('g')!.getAttribute('transform');
    const k = zoom();
    const at = moved();
    fireEvent.wheel(canvas, { deltaY: 120 });
    expect(zoom(), 'a plain wheel does not zoom').toBe(k);
    expect(moved(), 'it scrolls').not.toBe(at);
    fireEvent.wheel(canvas, { deltaY: -120, ctrlKey: true });
    expect(Number(zoom())).toBeGreaterThan(Number(k));
  });

  it('opens a world on double click', async () => {
    setup();
    await screen.findByRole('group', { name: 'Lineage graph' });
    fireEvent.doubleClick(node(/^grid \/ noisy,/));
    expect(window.location.hash).toBe('#/worlds/run_a');
  });
});

describe('LineageView with a deliberation', () => {
  // grid deliberated twice: round 1 tried a1 (then a1x) and b1, round 2 a2
  // and b2 (then b2x); each round chose its first candidate's best line.
  function searched(): LineageOutline {
    const w = (id: string, parent?: string, round?: number) => ({
      id,
      name: id,
      domain: 'simulated' as const,
      createdAt: '2026-12-01T10:00:00Z',
      runs: 1,
      runId: `run_${id}`,
      status: 'running' as const,
      ...(parent ? { parent } : {}),
      ...(round ? { round } : {}),
    });
    const worlds = [w('grid'), w('a1', 'grid', 1), w('a1x', 'a1', 1), w('b1', 'grid', 1), w('a2', 'grid', 2), w('b2', 'grid', 2), w('b2x', 'b2', 2)];
    return {
      worlds,
      forks: worlds.filter((x) => x.parent).map((x) => ({ id: `frk_${x.id}`, from: x.parent!, to: x.id, divergence: 'action_override' as const, at: 0 })),
    };
  }
  const round = (index: number, scores: Record<string, number>, best: string) => ({
    deliberationIndex: index,
    parentRunId: 'run_grid',
    parentWorldId: 'grid',
    checkpointId: 'cpt',
    parentTime: 0,
    strategy: 'beam',
    depth: 2,
    seeds: [1],
    budget: { branches: 10, used: 3, steps: 3, deduplicated: 0, depth: 2, wallMs: 1, stopped: 'exhausted' },
    candidates: [{ action: 'E', score: 0, mean: 0, visits: 1, line: ['E'], branches: [], bestBranches: [best] }],
    chosen: 'E',
    scores,
  });

  it('colours branches by score, marks the chosen line, folds the older round and unfolds it', async () => {
    const deliberations = vi.fn(() => [round(1, { a1: -10, a1x: -8, b1: -12 }, 'a1x'), round(2, { a2: -5, b2: -4, b2x: -4 }, 'b2x')]);
    const { api } = fakeApi({ LineageOutline: searched, Deliberations: deliberations });
    render(<LineageView api={api} />);
    const legend = await screen.findByTestId('score-legend');
    expect(deliberations).toHaveBeenCalledWith('run_grid');
    expect(within(legend).getByRole('img', { name: '5 steps from lower to higher score' })).toBeTruthy();

    // Round 2 is drawn: its branches carry their score, the chosen line is marked.
    const b2x = node(/^b2x,/);
    expect(b2x.getAttribute('aria-label')).toBe('b2x, simulated, idle, score -4, on the chosen line');
    expect(b2x.querySelector('.score-bar')?.getAttribute('data-tone')).toBe('4');
    expect(node(/^a2,/).querySelector('.score-bar')?.getAttribute('data-tone')).toBe('0');
    expect(node(/^a2,/).getAttribute('class')).not.toContain('chosen');

    // Round 1 starts folded: its first branches stay, what is under them is hidden.
    await waitFor(() => expect(screen.queryByRole('button', { name: /^a1x,/ })).toBeNull());
    expect(node(/^a1,/)).toBeTruthy();
    fireEvent.click(within(legend).getByRole('button', { name: 'Unfold 1 older round' }));
    // The unfolded subtree is laid out again, then drawn.
    await waitFor(() => expect(node(/^a1x,/).getAttribute('aria-label')).toBe('a1x, simulated, idle, score -8, on the chosen line'));
    fireEvent.click(within(legend).getByRole('button', { name: 'Fold older rounds' }));
    await waitFor(() => expect(screen.queryByRole('button', { name: /^a1x,/ })).toBeNull());
  });

  it('folds a large latest round to its chosen line, and unfolds it', async () => {
    const outline = () => {
      const o = searched();
      const a2x = { ...o.worlds.find((w) => w.id === 'a2')!, id: 'a2x', name: 'a2x', runId: 'run_a2x', parent: 'a2' };
      return { worlds: [...o.worlds, a2x], forks: [...o.forks, { id: 'frk_a2x', from: 'a2', to: 'a2x', divergence: 'action_override' as const, at: 0 }] };
    };
    const big = round(2, { a2: -5, a2x: -6, b2: -4, b2x: -4 }, 'b2x');
    big.budget = { ...big.budget, branches: 20_000, used: 20_000 };
    const { api } = fakeApi({ LineageOutline: outline, Deliberations: () => [round(1, { a1: -10, a1x: -8, b1: -12 }, 'a1x'), big] });
    render(<LineageView api={api} />);
    const legend = await screen.findByTestId('score-legend');
    // The chosen line is drawn whole; the branch beside it keeps its place, folded.
    await waitFor(() => expect(screen.queryByRole('button', { name: /^a2x,/ })).toBeNull());
    expect(node(/^b2x,/).getAttribute('aria-label')).toContain('on the chosen line');
    expect(node(/^a2,/)).toBeTruthy();
    // What is folded takes no room: the layout leaves it out.
    const laidOut = () => vi.mocked(layoutModule.layoutDag).mock.calls.at(-1)![0].map((n) => n.id);
    await waitFor(() => expect(laidOut()).not.toContain('a2x'));
    expect(laidOut()).not.toContain('a1x');
    expect(laidOut()).toContain('b2x');
    fireEvent.click(within(legend).getByRole('button', { name: 'Unfold the latest round (20,000 branches)' }));
    await waitFor(() => expect(node(/^a2x,/)).toBeTruthy());
    expect(laidOut()).toContain('a2x');
    fireEvent.click(within(legend).getByRole('button', { name: 'Fold the latest round to its chosen line' }));
    await waitFor(() => expect(screen.queryByRole('button', { name: /^a2x,/ })).toBeNull());
  });

  it('follows a search live: recorded branches read the lineage again', async () => {
    const outlines = vi.fn(searched);
    const { api, channel } = fakeApi({ LineageOutline: outlines, Deliberations: () => [round(1, { a1: -1 }, 'a1')] });
    render(<LineageView api={api} />);
    await screen.findByTestId('score-legend');
    const before = outlines.mock.calls.length;
    channel.emit('ledger:events', [event({ seq: 1, pos: 50, stream: 'run_other', type: 'world.step' })]);
    channel.emit('ledger:events', [event({ seq: 1, pos: 51, stream: 'run_b9', type: 'world.forked' })]);
    await waitFor(() => expect(outlines.mock.calls.length).toBe(before + 1));
  });

  it('draws no score legend for a lineage without deliberations', async () => {
    const { api } = fakeApi({ LineageOutline: () => outline(lineage()) });
    render(<LineageView api={api} />);
    await screen.findByRole('button', { name: /^grid \/ noisy/ });
    expect(screen.queryByTestId('score-legend')).toBeNull();
  });
});
