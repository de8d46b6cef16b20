// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { polyfillLayout, typeInto } from '../test/dom';
import { EVENT_PROGRESS } from '../bridge/channel';
import { fakeApi } from '../test/fakeChannel';
import { checkpoint, event, listWorlds, worldItems, worldRun, worldSpec } from '../test/fixtures';
import { WorldView } from './WorldView';
import { Worlds } from './Worlds';

beforeAll(polyfillLayout);
afterEach(() => {
  cleanup();
  window.location.hash = '';
});

const GRID = { size: 9, pos: [1, 3], goal: [8, 8], walls: [[2, 0], [2, 1]], params: { noise: 0.2 }, steps: 10 };

describe('Worlds', () => {
  function setup(create: (input: { program: string }) => unknown) {
    return fakeApi({
      WorldExamples: () => [{ name: 'branching_grid', source: '# Branching Grid: an agent walks\ndef init(seed):\n    return {}\n' }],
      ListWorlds: listWorlds(worldItems()),
      CreateWorld: create,
    });
  }

  it('marks the line the backend names when creation fails, and clears it on edit', async () => {
    const { api } = setup(() => {
      throw new Error('world program line 3: undefined: foo');
    });
    const { container } = render(<Worlds api={api} />);
    typeInto(container, 'def init(seed):\n    x = 1\n    return foo\n');
    fireEvent.click(screen.getByRole('button', { name: 'Create world' }));

    expect((await screen.findByTestId('create-error')).textContent).toBe('world program line 3: undefined: foo. Fix line 3 and create again.');
    await waitFor(() => expect(container.querySelector('.cm-error-line')).not.toBeNull());
    const marked = container.querySelector('.cm-error-line')!;
    expect(marked.getAttribute('data-error-line')).toBe('3');
    expect(marked.textContent).toBe('    return foo');

    typeInto(container, 'def init(seed):\n    return {}\n');
    await waitFor(() => expect(container.querySelector('.cm-error-line')).toBeNull());
  });

  it('opens the Branching Grid example and goes to its run', async () => {
    const create = vi.fn(() => ({ world: worldSpec(), run: worldRun({ id: 'run_grid' }) }));
    const { api } = setup(create);
    render(<Worlds api={api} />);
    fireEvent.click(await screen.findByRole('button', { name: 'Open Branching Grid' }));
    await waitFor(() => expect(window.location.hash).toBe('#/worlds/run_grid'));
    expect(create).toHaveBeenCalledWith({ program: '', example: 'branching_grid', name: 'branching_grid', seed: 1 });
  });

  it('lists the simulated worlds', async () => {
    const { api } = setup(() => null);
    render(<Worlds api={api} />);
    const list = await screen.findByRole('region', { name: 'Simulated worlds' });
    expect(await within(list).findByText('grid / noisy')).toBeTruthy();
    expect(within(list).getAllByRole('link')).toHaveLength(3);
    expect(screen.getByTestId('world-count').textContent).toBe('3 worlds, newest first');
  });

  it('says a world no batch of steps moves is idle, and running only while one is computed', async () => {
    const items = worldItems().map((w, i) => (w.latestRun ? { ...w, latestRun: { ...w.latestRun, status: 'running' as const, ...(i === 0 ? { stepping: true } : {}) } } : w));
    const { api } = fakeApi({ WorldExamples: () => [], ListWorlds: listWorlds(items) });
    render(<Worlds api={api} />);
    const list = await screen.findByRole('region', { name: 'Simulated worlds' });
    await within(list).findByText('grid / noisy');
    const states = [...list.querySelectorAll('.world-item .status')].map((b) => b.textContent);
    expect(states).toEqual(['running', 'idle', 'idle']);
    expect(list.querySelector('.world-item .status-idle')!.getAttribute('title')).toMatch(/^Idle at t=\d+: open and waiting for its next steps/);
  });

  it('reads a long list a page at a time and finds worlds by name or id', async () => {
    const many = Array.from({ length: 230 }, (_, i) => ({
      ...worldItems()[0]!,
      id: `wld_${String(i).padStart(4, '0')}`,
      name: i === 7 ? 'harbour traffic' : `world ${i}`,
      latestRun: { id: `run_${i}`, status: 'completed' as const, worldLocalTime: i },
    }));
    const { api, channel } = fakeApi({ WorldExamples: () => [], ListWorlds: listWorlds(many) });
    render(<Worlds api={api} />);
    const list = await screen.findByRole('region', { name: 'Simulated worlds' });
    // Role queries over hundreds of rows take seconds in jsdom on a busy
    // machine, longer than waitFor's retry window: count the links directly.
    const links = (el: HTMLElement) => [...el.querySelectorAll('a[href]')];
    await within(list).findByText('world 0');
    expect(links(list)).toHaveLength(100);
    expect(screen.getByTestId('world-count').textContent).toBe('100 of 230 worlds, newest first');

    fireEvent.click(within(list).getByRole('button', { name: 'Show 100 more' }));
    await waitFor(() => expect(links(list)).toHaveLength(200));
    fireEvent.click(within(list).getByRole('button', { name: 'Show 30 more' }));
    await waitFor(() => expect(links(list)).toHaveLength(230));
    expect(within(list).queryByRole('button', { name: /more/ })).toBeNull();
    expect(channel.calls('ListWorlds').map((c) => (c[0] as { after?: string }).after)).toEqual([undefined, '100', '200']);

    // The ledger moved (a world stepped elsewhere): the list reads again
    // what it shows, not only its first page.
    channel.emit('ledger:events', [event({ seq: 9, pos: 9, type: 'world.step' })]);
    await waitFor(() => expect(channel.calls('ListWorlds').at(-1)![0]).toEqual({ domain: 'simulated', text: '', withoutBranches: true, limit: 230 }));
    expect(links(list)).toHaveLength(230);

    fireEvent.change(within(list).getByRole('searchbox', { name: 'Find a world' }), { target: { value: 'Harbour' } });
    await waitFor(() => expect(links(list)).toHaveLength(1));
    expect(within(list).getByText('harbour traffic')).toBeTruthy();
    expect(screen.getByTestId('world-count').textContent).toBe('1 match');
    expect(channel.calls('ListWorlds').at(-1)![0]).toEqual({ domain: 'simulated', text: 'Harbour', withoutBranches: true, limit: 100 });

    fireEvent.change(within(list).getByRole('searchbox', { name: 'Find a world' }), { target: { value: 'nothing like it' } });
    expect(await within(list).findByText('No simulated world’s name or id contains “nothing like it”.')).toBeTruthy();
  }, 90_000);

  it('leaves deliberation branches out until asked, and says how many', async () => {
    const branch = (i: number, round: number) => ({
      ...worldItems()[1]!,
      id: `wld_branch${i}`,
      name: `grid / deliberation ${round}`,
      parent: 'wld_root',
      latestRun: { id: `run_branch${i}`, status: 'running' as const, worldLocalTime: 4, deliberationIndex: round },
    });
    const items = [...Array.from({ length: 40 }, (_, i) => branch(i, 1 + (i % 2))), ...worldItems().map((w) => (w.id === 'wld_root' ? { ...w, forks: 42, branches: 40 } : w))];
    const { api, channel } = fakeApi({ WorldExamples: () => [], ListWorlds: listWorlds(items) });
    render(<Worlds api={api} />);
    const list = await screen.findByRole('region', { name: 'Simulated worlds' });
    await within(list).findByText('grid / noisy');
    expect(within(list).getByRole('link', { name: 'Lineage' }).getAttribute('href')).toBe('#/lineage');
    expect(list.querySelectorAll('a.world-item')).toHaveLength(3);
    expect(screen.getByTestId('world-count').textContent).toBe('3 worlds, newest first');
    expect(within(list).getByText('2 forks, 40 branches')).toBeTruthy();
    const note = screen.getByTestId('branches-note');
    expect(note.textContent).toBe('40 deliberation branches are not listed. The Lineage shows them under their rounds. List them too');

    fireEvent.click(within(note).getByRole('button', { name: 'List them too' }));
    await waitFor(() => expect(list.querySelectorAll('a.world-item')).toHaveLength(43));
    expect(channel.calls('ListWorlds').at(-1)![0]).toEqual({ domain: 'simulated', text: '', limit: 100 });
    expect(within(list).getAllByText('branch, round 2')).toHaveLength(20);
    expect(screen.getByTestId('world-count').textContent).toBe('43 worlds, newest first');

    fireEvent.click(within(screen.getByTestId('branches-note')).getByRole('button', { name: 'Leave them out' }));
    await waitFor(() => expect(list.querySelectorAll('a.world-item')).toHaveLength(3));

    // A search that only branches match says so.
    fireEvent.change(within(list).getByRole('searchbox', { name: 'Find a world' }), { target: { value: 'branch7' } });
    expect(await within(list).findByText('No simulated world’s name or id contains “branch7”.')).toBeTruthy();
    expect(screen.getByTestId('branches-note').textContent).toMatch(/^1 deliberation branch matches but is not listed\./);
  });
});

describe('WorldView', () => {
  function setup(extra: Record<string, (...a: never[]) => unknown> = {}) {
    let state = structuredClone(GRID);
    const detail = () => ({
      world: worldSpec({ id: 'wld_root', name: 'grid' }),
      run: worldRun({ id: 'run_root', worldId: 'wld_root', worldLocalTime: state.steps }),
      runs: null,
      checkpoints: [checkpoint({ id: 'cpt_1', runId: 'run_root', worldLocalTime: 3 })],
      state,
      program: '# grid',
    });
    const api = fakeApi({
      WorldDetail: detail,
      ListWorlds: listWorlds(worldItems()),
      RunWorld: (input: { steps: number }) => {
        state = { ...state, pos: [state.pos[0]!, Math.min(8, state.pos[1]! + 1)], steps: state.steps + input.steps };
        return { run: worldRun({ id: 'run_root' }), state, emitted: [{ type: 'moved', to: state.pos }], done: false };
      },
      CheckpointWorld: () => checkpoint({ id: 'cpt_2', worldLocalTime: 11 }),
      Fork: () => ({ fork: {}, world: worldSpec({ id: 'wld_c' }), run: worldRun({ id: 'run_child' }) }),
      Diff: () => ({ a: 'run_a', b: 'run_b', sharedEvents: 4, stateA: { pos: [1, 1] }, stateB: { pos: [2, 1] }, stateChanges: [{ path: '/pos/0', kind: 'changed', a: 1, b: 2 }], eventsA: null, eventsB: null, eventsATotal: 0, eventsBTotal: 0 }),
      ...extra,
    });
    render(<WorldView api={api.api} runId="run_root" />);
    return api;
  }

  it('lists checkpoints by id, marks the one Checkpoint answered with, and says when nothing new was taken', async () => {
    const cps = [checkpoint({ id: 'cpt_01aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1', runId: 'run_root', worldLocalTime: 3 })];
    const taken = checkpoint({ id: 'cpt_01bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb2', runId: 'run_root', worldLocalTime: 11 });
    setup({
      WorldDetail: () => ({ world: worldSpec({ id: 'wld_root', name: 'grid' }), run: worldRun({ id: 'run_root', worldId: 'wld_root' }), runs: null, checkpoints: [...cps], state: GRID, program: '# grid' }),
      CheckpointWorld: () => {
        if (!cps.some((c) => c.id === taken.id)) cps.push(taken);
        return taken;
      },
    });
    await screen.findAllByTestId('checkpoint');
    expect(screen.getAllByTestId('checkpoint')[0]!.textContent).toContain('cpt_…aaaaaaa1');
    fireEvent.click(screen.getByRole('button', { name: 'Checkpoint' }));
    await screen.findByText(/^Checkpoint cpt_…bbbbbbb2 taken at world time 11 \(marked below\)\.$/);
    await waitFor(() => expect(screen.getAllByTestId('checkpoint')).toHaveLength(2));
    const marked = () => screen.getAllByTestId('checkpoint').filter((li) => li.getAttribute('aria-current') === 'true');
    expect(marked().map((li) => li.textContent)).toEqual([expect.stringContaining('cpt_…bbbbbbb2')]);
    // The world has not moved: the same checkpoint comes back, and the window says so.
    fireEvent.click(screen.getByRole('button', { name: 'Checkpoint' }));
    await screen.findByText(/^Nothing new to take: the world has not moved since checkpoint cpt_…bbbbbbb2 at world time 11/);
    expect(screen.getAllByTestId('checkpoint')).toHaveLength(2);
  });

  it('draws the grid: walls, goal and agent', async () => {
    setup();
    const grid = await screen.findByTestId('grid-view');
    expect(grid.getAttribute('aria-label')).toBe('Grid 9 by 9: agent at 1, 3; goal at 8, 8; 2 walls');
    expect(grid.querySelectorAll('[data-wall]')).toHaveLength(2);
    fireEvent.click(screen.getByRole('button', { name: 'JSON' }));
    expect(screen.getByRole('tree', { name: 'World state' })).toBeTruthy();
  });

  it('says why a run failed and the limits its program runs under', async () => {
    const error =
      'world program used more than its memory limit of 64 MiB during step; if it needs more, raise the memory limit of world programs in Settings (worldMemoryMiB in settings.json)';
    setup({
      WorldDetail: () => ({
        world: worldSpec({ id: 'wld_root', name: 'grows' }),
        run: worldRun({ id: 'run_root', worldId: 'wld_root', status: 'failed', error }),
        runs: null,
        checkpoints: [checkpoint({ id: 'cpt_1', runId: 'run_root', worldLocalTime: 0 })],
        state: { n: 4 },
        program: '# grows',
        limits: { maxSteps: 1000000, maxStateBytes: 8 << 20, maxMemoryBytes: 64 << 20 },
      }),
    });
    expect((await screen.findByTestId('run-error')).textContent).toBe(error);
    expect(screen.getByTestId('world-limits').textContent).toBe(
      'Each call of its program: at most 1,000,000 execution steps, 8 MiB of state and 64 MiB of memory (Settings).',
    );
    expect(within(screen.getByTestId('world-limits')).getByRole('link', { name: 'Settings' }).getAttribute('href')).toBe('#/settings');
  });

  it('runs steps in chunks with progress and redraws', async () => {
    const { channel } = setup();
    await screen.findByTestId('grid-view');
    fireEvent.change(screen.getByRole('textbox', { name: 'Steps to run' }), { target: { value: '50' } });
    fireEvent.click(screen.getByRole('button', { name: 'Run 50 steps' }));
    expect(await screen.findByRole('progressbar', { name: 'Steps run' })).toBeTruthy();
    await waitFor(() => expect(screen.queryByRole('progressbar')).toBeNull());
    const calls = channel.calls('RunWorld').map((c) => (c[0] as { steps: number }).steps);
    expect(calls.reduce((a, b) => a + b, 0)).toBe(50);
    expect(calls.length).toBeGreaterThan(1);
    await waitFor(() => expect(screen.getByTestId('grid-view').getAttribute('aria-label')).toContain('agent at 1, 8'));
  });

  it('says the run is idle, and running while its steps are computed', async () => {
    let release = () => {};
    setup({
      RunWorld: () =>
        new Promise((resolve) => {
          release = () => resolve({ run: worldRun({ id: 'run_root' }), state: GRID, emitted: [], done: false });
        }),
    });
    await screen.findByTestId('grid-view');
    const badge = () => document.querySelector('.run-head .status')!;
    expect(badge().textContent).toBe('idle');
    fireEvent.change(screen.getByRole('textbox', { name: 'Steps to run' }), { target: { value: '1' } });
    fireEvent.click(screen.getByRole('button', { name: 'Run 1 step' }));
    await waitFor(() => expect(badge().textContent).toBe('running'));
    release();
    await waitFor(() => expect(badge().textContent).toBe('idle'));
  });

  it('forks a checkpoint through the delta editor', async () => {
    const { channel } = setup();
    fireEvent.click(await screen.findByRole('button', { name: 'Fork…' }));
    const dialog = screen.getByRole('dialog', { name: 'Fork from checkpoint' });
    const delta = within(dialog).getByRole('textbox', { name: 'Delta JSON' });
    fireEvent.change(delta, { target: { value: '[1]' } });
    expect(within(dialog).getByTestId('delta-problem').textContent).toMatch(/JSON object/);
    expect((within(dialog).getByRole('button', { name: 'Create child world' }) as HTMLButtonElement).disabled).toBe(true);
    fireEvent.change(delta, { target: { value: '{"pos": [0, 5]}' } });
    fireEvent.click(within(dialog).getByRole('radio', { name: /Derive/ }));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create child world' }));
    await waitFor(() => expect(window.location.hash).toBe('#/worlds/run_child'));
    expect(channel.calls('Fork')[0]![0]).toEqual({
      checkpointId: 'cpt_1',
      parentRunId: 'run_root',
      divergence: 'state_patch',
      delta: '{"pos": [0, 5]}',
      seedPolicy: 'derive',
      name: '',
      deliberationIndex: 0,
    });
  });

  it('compares two children side by side', async () => {
    const { channel } = setup();
    const forks = await screen.findByRole('region', { name: 'Forks of this world' });
    await within(forks).findByText('grid / noisy');
    fireEvent.click(within(forks).getByRole('checkbox', { name: 'grid / noisy' }));
    fireEvent.click(within(forks).getByRole('checkbox', { name: 'grid / calm' }));
    fireEvent.click(within(forks).getByRole('button', { name: 'Compare 2/2' }));
    const compare = await screen.findByTestId('compare');
    await within(compare).findByText('/pos/0');
    expect(channel.calls('Diff')).toEqual([['run_a', 'run_b']]);
  });

  it('shows the rounds this run deliberated, newest first, each opening to its candidates', async () => {
    const round = (i: number, chosen: string) => ({
      deliberationIndex: i,
      parentRunId: 'run_root',
      parentWorldId: 'wld_root',
      checkpointId: 'cpt_1',
      parentTime: 5 + i,
      strategy: 'mcts',
      depth: 10,
      seeds: [],
      budget: { branches: 300, used: 300, steps: 300, deduplicated: 160, depth: 10, wallMs: 2100, stopped: 'budget' },
      candidates: [
        { action: chosen, score: -26, mean: -29.3, visits: 142, line: [chosen, 'S'], branches: ['wld_b1'], bestBranches: ['wld_b2'], state: GRID },
        { action: 'N', score: -28, mean: -33.9, visits: 50, line: ['N'], branches: ['wld_b3'], bestBranches: ['wld_b3'] },
      ],
      chosen,
    });
    const searched = { ...round(2, 'E'), budget: { branches: 200, used: 104, steps: 104, deduplicated: 3, depth: 10, wallMs: 900, stopped: 'exhausted' } };
    const { channel } = setup({ Deliberations: () => [{ ...round(1, 'S'), appliedAt: 7 }, searched] });
    const panel = await screen.findByRole('region', { name: 'Deliberations' });
    const heads = await within(panel).findAllByRole('button', { expanded: false });
    // Why a round stopped short of its budget, what its scores mean, and whether the world took its choice.
    expect(heads.map((h) => h.textContent)).toEqual([
      'Round 2 at t=7mcts, 104 of 200 branches (searched everything within depth 10): chose "E", score -26.00 (higher is better; the program’s score())not applied',
      'Round 1 at t=6mcts, 300 of 300 branches (budget spent): chose "S", score -26.00 (higher is better; the program’s score())applied: the world took "S" (t=7)',
    ]);
    expect(within(heads[1]!).getByTestId('round-applied').className).toContain('applied-badge');
    expect(channel.calls('Deliberations')).toEqual([['run_root']]);
    fireEvent.click(heads[1]!);
    expect(within(panel).getByTestId('round-summary').textContent).toMatch(/^Round 1 at time 6: 300 of 300 branches.*Its budget of 300 branches was spent\./);
    expect(within(panel).getByRole('article', { name: 'Candidate 1' }).textContent).toContain('Best line: "S" "S"');
    expect(within(panel).getByRole('article', { name: 'Candidate 1' }).textContent).not.toContain('Divergence');
    expect(within(panel).getByRole('article', { name: 'Candidate 2' })).toBeTruthy();

    // A round recorded elsewhere (the CLI, a task) joins the list.
    channel.emit('ledger:events', [event({ seq: 3, pos: 30, type: 'deliberation.round', stream: 'dlb_root' })]);
    await waitFor(() => expect(channel.calls('Deliberations')).toHaveLength(2));
    // A step of this run may take a round's choice: the rounds are read again, to say which is applied.
    channel.emit('ledger:events', [event({ seq: 12, pos: 31, type: 'world.step', stream: 'run_root' })]);
    await waitFor(() => expect(channel.calls('Deliberations')).toHaveLength(3));
  });

  it('shows no Deliberations panel for a run that never deliberated', async () => {
    setup({ Deliberations: () => [] });
    await screen.findByRole('region', { name: 'Forks of this world' });
    await waitFor(() => expect(screen.queryByRole('region', { name: 'Deliberations' })).toBeNull());
  });

  it('lists the forks made by hand, and its deliberations’ branches only when asked', async () => {
    const branches = Array.from({ length: 6 }, (_, i) => ({
      ...worldItems()[1]!,
      id: `wld_branch${i}`,
      name: `grid / deliberation ${1 + (i % 2)}`,
      latestRun: { id: `run_branch${i}`, status: 'running' as const, worldLocalTime: 4, deliberationIndex: 1 + (i % 2) },
    }));
    setup({ ListWorlds: listWorlds([...branches, ...worldItems()]) });
    const forks = await screen.findByRole('region', { name: 'Forks of this world' });
    await within(forks).findByText('grid / noisy');
    expect(within(forks).getAllByRole('link', { name: 'Open' })).toHaveLength(2);
    const note = within(forks).getByTestId('fork-branches-note');
    expect(note.textContent).toBe('6 deliberation branches are not listed. List them too');
    fireEvent.click(within(note).getByRole('button', { name: 'List them too' }));
    await waitFor(() => expect(within(forks).getAllByRole('link', { name: 'Open' })).toHaveLength(8));
    expect(within(forks).getAllByText('round 2')).toHaveLength(3);
  });
});

describe("WorldView's Run on the team's workers", () => {
  const worker = (over: object = {}) => ({
    id: 'w1',
    host: 'gpu-1',
    pid: 1,
    slots: 2,
    version: 'v',
    startedAt: '',
    heartbeatAt: '',
    stoppedAt: '',
    state: 'idle',
    jobs: [],
    done: 0,
    ...over,
  });
  const team = (workers: object[], shared = true) => ({ shared, workers, heartbeatMs: 5000, lostAfterMs: 15000, now: '' });

  function open(workers: () => unknown) {
    let finish: (v: unknown) => void = () => {};
    let fail: (e: Error) => void = () => {};
    const api = fakeApi({
      WorldDetail: () => ({
        world: worldSpec({ id: 'wld_root', name: 'grid' }),
        run: worldRun({ id: 'run_root', worldId: 'wld_root', worldLocalTime: 10 }),
        runs: null,
        checkpoints: [],
        state: GRID,
        program: '# grid',
      }),
      ListWorlds: listWorlds(worldItems()),
      Workers: workers,
      RunWorld: () =>
        new Promise((res, rej) => {
          finish = res;
          fail = rej;
        }),
    });
    render(<WorldView api={api.api} runId="run_root" />);
    return { ...api, finish: (v: unknown) => finish(v), fail: (e: Error) => fail(e) };
  }

  it('offers the workers when some are alive, follows the job and says where it ran', async () => {
    const { channel, finish } = open(() => team([worker(), worker({ id: 'w2', state: 'lost' }), worker({ id: 'w3', slots: 4, state: 'working', jobs: [{}] })]));
    const choice = await screen.findByTestId('run-workers-choice');
    expect(choice.textContent).toBe('2 workers alive, 5 of 6 slots free: the steps go to one of them as one job.');
    fireEvent.change(screen.getByRole('textbox', { name: 'Steps to run' }), { target: { value: '500' } });
    fireEvent.click(screen.getByRole('radio', { name: /On the team's workers/ }));
    fireEvent.click(screen.getByRole('button', { name: 'Run 500 steps' }));
    await waitFor(() => expect(channel.calls('RunWorld')).toHaveLength(1));
    const input = channel.calls('RunWorld')[0]![0] as { op: string; onWorkers?: boolean; steps: number };
    expect(input).toMatchObject({ runId: 'run_root', steps: 500, onWorkers: true });
    expect(screen.getByTestId('run-workers-progress').textContent).toBe("Queued for the team's workers…");
    channel.emit(EVENT_PROGRESS, [{ op: input.op, phase: "on the team's workers", done: 200, total: 500, unit: 'steps' }]);
    await waitFor(() => expect(screen.getByTestId('run-workers-progress').textContent).toBe("200/500 steps on the team's workers"));
    finish({ run: worldRun({ id: 'run_root', worldLocalTime: 510 }), state: GRID, emitted: null, done: false });
    expect(await screen.findByText("Ran 500 steps on the team's workers: world time 510.")).toBeTruthy();
    expect(screen.queryByTestId('run-workers-progress')).toBeNull();
  });

  it('runs here by default, and cannot choose workers when none is alive', async () => {
    const { channel } = open(() => team([worker({ state: 'stopped' })]));
    const choice = await screen.findByTestId('run-workers-choice');
    expect(choice.textContent).toBe('No worker is alive: start one with ducklm worker (see Workers) to run steps there.');
    expect((screen.getByRole('radio', { name: /On the team's workers/ }) as HTMLInputElement).disabled).toBe(true);
    fireEvent.change(screen.getByRole('textbox', { name: 'Steps to run' }), { target: { value: '1' } });
    fireEvent.click(screen.getByRole('button', { name: 'Run 1 step' }));
    await waitFor(() => expect(channel.calls('RunWorld')).toHaveLength(1));
    expect(channel.calls('RunWorld')[0]![0]).not.toHaveProperty('onWorkers');
  });

  it('stops the run on the workers and says it keeps what was saved', async () => {
    const { channel, fail } = open(() => team([worker()]));
    channel.handle('CancelWorldRun', () => {
      fail(new Error("the run on the team's workers was stopped; it keeps the steps its worker saved"));
      return true;
    });
    await screen.findByTestId('run-workers-choice');
    fireEvent.click(screen.getByRole('radio', { name: /On the team's workers/ }));
    fireEvent.click(screen.getByRole('button', { name: 'Run 10 steps' }));
    await waitFor(() => expect(channel.calls('RunWorld')).toHaveLength(1));
    const op = (channel.calls('RunWorld')[0]![0] as { op: string }).op;
    fireEvent.click(screen.getByRole('button', { name: 'Stop' }));
    await waitFor(() => expect(channel.calls('CancelWorldRun')).toEqual([[op]]));
    expect(await screen.findByText("Stopped on the team's workers: the run keeps the steps its worker saved.")).toBeTruthy();
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('says the sentence a refused run answers with', async () => {
    const { channel, fail } = open(() => team([worker()]));
    await screen.findByTestId('run-workers-choice');
    fireEvent.click(screen.getByRole('radio', { name: /On the team's workers/ }));
    fireEvent.click(screen.getByRole('button', { name: 'Run 10 steps' }));
    await waitFor(() => expect(channel.calls('RunWorld')).toHaveLength(1));
    fail(new Error('no worker is alive to take the run; start one with `ducklm worker` on a machine that reaches the team’s database, or run the steps here'));
    expect((await screen.findByRole('alert')).textContent).toContain('no worker is alive to take the run');
  });

  it('offers nothing on this machine’s SQLite database', async () => {
    const { channel } = open(() => team([], false));
    await waitFor(() => expect(channel.calls('Workers')).toHaveLength(1));
    await screen.findByTestId('grid-view');
    expect(screen.queryByRole('radiogroup', { name: 'Run the steps' })).toBeNull();
  });
});
