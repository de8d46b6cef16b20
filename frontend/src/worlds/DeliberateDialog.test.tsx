// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EVENT_PROGRESS } from '../bridge/channel';
import { fakeApi } from '../test/fakeChannel';
import { worldRun } from '../test/fixtures';
import { DeliberateDialog, checkOptions } from './DeliberateDialog';

afterEach(cleanup);

const GRID = (pos: number[]) => ({ size: 9, pos, goal: [8, 8], walls: [[2, 0]], params: { noise: 0 }, steps: 1 });

const ROUND = {
  deliberationIndex: 3,
  parentRunId: 'run_p',
  parentWorldId: 'wld_p',
  checkpointId: 'ckp_1',
  parentTime: 0,
  strategy: 'beam',
  width: 4,
  depth: 10,
  seeds: null,
  budget: { branches: 200, used: 57, steps: 57, deduplicated: 4, depth: 10, wallMs: 180, stopped: 'exhausted' },
  candidates: [
    { action: 'E', score: -24, mean: -25, visits: 30, line: ['E', 'S'], branches: ['wld_e'], bestBranches: ['wld_e2'], state: GRID([1, 1]) },
    { action: 'S', score: -24.5, mean: -26, visits: 27, line: ['S'], branches: null, bestBranches: null, state: GRID([0, 1]) },
    { action: 'W', score: 0, mean: 0, visits: 1, line: ['W'], branches: [], bestBranches: [], failed: 'world program line 3: no' },
  ],
  chosen: 'E',
};

function setup() {
  let finish: (v: unknown) => void = () => {};
  let fail: (e: Error) => void = () => {};
  const { api, channel } = fakeApi({
    Deliberate: () =>
      new Promise((res, rej) => {
        finish = res;
        fail = rej;
      }),
    CancelDeliberation: () => true,
    ApplyDeliberation: () => ({ run: worldRun({ worldLocalTime: 1 }), state: GRID([1, 0]), emitted: null, done: false }),
  });
  const onApplied = vi.fn();
  render(<DeliberateDialog api={api} runId="run_p" worldId="wld_p" parentName="grid" onClose={() => {}} onApplied={onApplied} />);
  return { channel, onApplied, finish: (v: unknown) => finish(v), fail: (e: Error) => fail(e) };
}

describe('DeliberateDialog', () => {
  it('shows progress with Cancel, and says why a cancelled search stopped', async () => {
    const { channel, finish } = setup();
    fireEvent.click(screen.getByRole('radio', { name: /Tree search/ }));
    expect(screen.queryByLabelText('Beam width')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Deliberate' }));
    await waitFor(() => expect(channel.calls('Deliberate')).toHaveLength(1));
    const input = channel.calls('Deliberate')[0]![0] as { op: string; strategy: string; budget: number; apply: boolean };
    expect(input).toMatchObject({ strategy: 'mcts', budget: 200, apply: false, runId: 'run_p' });
    expect(input.op).not.toBe('');

    channel.emit(EVENT_PROGRESS, [{ op: 'someone else', phase: 'x', done: 1, total: 2, unit: 'entries' }]);
    channel.emit(EVENT_PROGRESS, [{ op: input.op, phase: 'round 1', done: 40, total: 200, unit: 'branches' }]);
    expect(screen.getByTestId('deliberation-progress').textContent).toMatch(/^40 of 200 branches · \d+\/s · 160 left$/);
    expect((screen.getByRole('button', { name: 'Close' }) as HTMLButtonElement).disabled).toBe(true);

    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(channel.calls('CancelDeliberation')).toEqual([[input.op]]));
    // The backend answers the call it cancelled, not as a failed request.
    finish({ rounds: [], run: worldRun(), done: false, cancelled: 'the deliberation was cancelled after 0 finished rounds; the branches it recorded stay in the lineage as hypotheses' });
    // A search the user cancelled is a status, not an error.
    expect((await screen.findByRole('status', { name: 'Cancelled' })).textContent).toBe(
      'The deliberation was cancelled after 0 finished rounds; the branches it recorded stay in the lineage as hypotheses',
    );
    expect(screen.queryByRole('alert')).toBeNull();
    expect(screen.queryByRole('status', { name: 'Deliberation progress' })).toBeNull();
    expect((screen.getByRole('button', { name: 'Apply best' }) as HTMLButtonElement).disabled).toBe(true);
  });

  it('shows a search that failed on its own as an error', async () => {
    const { channel, fail } = setup();
    fireEvent.click(screen.getByRole('button', { name: 'Deliberate' }));
    await waitFor(() => expect(channel.calls('Deliberate')).toHaveLength(1));
    fail(new Error('world wld_p cannot be deliberated: its program must define actions(state) and score(state)'));
    expect((await screen.findByRole('alert')).textContent).toMatch(/cannot be deliberated/);
    expect(screen.queryByRole('status', { name: 'Cancelled' })).toBeNull();
  });

  it('ranks the candidates, draws the best two side by side and applies the best', async () => {
    const { channel, finish, onApplied } = setup();
    fireEvent.click(screen.getByRole('button', { name: 'Deliberate' }));
    await waitFor(() => expect(channel.calls('Deliberate')).toHaveLength(1));
    finish({ rounds: [ROUND], run: worldRun(), done: false });

    const cands = await screen.findByRole('region', { name: 'Candidates' });
    expect(screen.getByTestId('round-summary').textContent).toContain('Round 3 at time 0: 57 of 200 branches, 57 steps, 4 duplicate states merged');
    const first = within(cands).getByRole('article', { name: 'Candidate 1' });
    const second = within(cands).getByRole('article', { name: 'Candidate 2' });
    expect(within(first).getByTestId('grid-view').getAttribute('aria-label')).toContain('agent at 1, 1');
    expect(within(second).getByTestId('grid-view').getAttribute('aria-label')).toContain('agent at 0, 1');
    expect(first.textContent).toContain('Best line: "E" "S"');
    expect(screen.getByTestId('round-summary').textContent).toContain('Nothing was left to search within depth 10.');
    expect(screen.getByTestId('score-meaning').textContent).toBe('Scores: higher is better; the program’s score(), at the end of each line (the mean over the seeds).');
    expect(within(cands).getAllByRole('row')).toHaveLength(4);
    expect(within(cands).getAllByRole('row')[3]!.textContent).toContain('failed');

    fireEvent.click(screen.getByRole('button', { name: 'Apply best: "E"' }));
    await waitFor(() => expect(onApplied).toHaveBeenCalledTimes(1));
    expect(channel.calls('ApplyDeliberation')).toEqual([['run_p', 3]]);
  });

  it('says what each option means in the dialog, with no tooltip over the fields', () => {
    setup();
    // A title on a field or around it drew a native tooltip over the Seeds field in the desktop
    // window (WebKitGTK; issue 30, confusing 9). The hints are text under the fields instead.
    const dialog = screen.getByRole('dialog', { name: 'Deliberate' });
    const hints: Record<string, string> = {
      'Beam width': 'nodes kept at each depth',
      Depth: 'actions a branch may look ahead',
      Budget: 'most branches (forks) to record',
      Seeds: 'K > 1 averages K seeds: an expected score',
    };
    for (const [label, hint] of Object.entries(hints)) {
      const field = within(dialog).getByRole('textbox', { name: label });
      expect(field, label).toHaveProperty('title', '');
      for (let el = field.parentElement; el; el = el.parentElement) expect(el.getAttribute('title'), `${label}'s ancestor ${el.tagName}.${el.className}`).toBeNull();
      expect(field.getAttribute('aria-describedby'), label).toBeTruthy();
      expect(document.getElementById(field.getAttribute('aria-describedby')!)?.textContent, label).toBe(`${label}: ${hint}`);
    }
    expect(dialog.querySelectorAll('[title]')).toHaveLength(0);
  });

  it('refuses options out of range before asking', () => {
    expect(checkOptions({ width: '4', depth: '0', budget: '200', seeds: '1' }, 'beam')).toBe('Depth is a whole number from 1 to 200.');
    expect(checkOptions({ width: 'x', depth: '3', budget: '200', seeds: '1' }, 'mcts')).toBeUndefined();
    expect(checkOptions({ width: '4', depth: '3', budget: '200', seeds: '65' }, 'beam')).toBe('Seeds is a whole number from 1 to 64.');
    setup();
    fireEvent.change(screen.getByLabelText('Budget'), { target: { value: '0' } });
    expect(screen.getByText('Budget is a whole number from 1 to 100000.')).toBeTruthy();
    expect((screen.getByRole('button', { name: 'Deliberate' }) as HTMLButtonElement).disabled).toBe(true);
  });
});

describe('DeliberateDialog on the team’s workers', () => {
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
    const { api, channel } = fakeApi({
      Workers: workers,
      Deliberate: () => new Promise((res) => (finish = res)),
    });
    render(<DeliberateDialog api={api} runId="run_p" worldId="wld_p" parentName="grid" onClose={() => {}} onApplied={() => {}} />);
    return { channel, finish: (v: unknown) => finish(v) };
  }

  it('offers the workers when some are alive, sends the branches there and says so in the progress', async () => {
    const { channel, finish } = open(() => team([worker(), worker({ id: 'w2', state: 'lost', slots: 8 }), worker({ id: 'w3', slots: 4, state: 'working', jobs: [{}] })]));
    const choice = await screen.findByTestId('workers-choice');
    expect(choice.textContent).toBe('2 workers alive, 5 of 6 slots free: 24 branches are kept queued for them.');
    fireEvent.click(screen.getByRole('radio', { name: /On the team's workers/ }));
    fireEvent.click(screen.getByRole('button', { name: 'Deliberate' }));
    await waitFor(() => expect(channel.calls('Deliberate')).toHaveLength(1));
    const input = channel.calls('Deliberate')[0]![0] as { op: string; onWorkers?: number };
    expect(input.onWorkers).toBe(24);
    expect(screen.getByTestId('deliberation-progress').textContent).toBe('Queuing branches for the workers…');
    channel.emit(EVENT_PROGRESS, [{ op: input.op, phase: 'round 1', done: 40, total: 200, unit: 'branches' }]);
    await waitFor(() => expect(screen.getByTestId('deliberation-progress').textContent).toMatch(/^40 of 200 branches on workers · \d+\/s · 160 left$/));
    finish({ rounds: [ROUND] });
    expect((await screen.findByTestId('round-summary')).textContent).toContain("180 ms, the branches on the team's workers. Nothing was left to search within depth 10. The search tree");
  });

  it('runs here by default, and cannot choose workers when none is alive', async () => {
    const { channel } = open(() => team([worker({ state: 'stopped' })]));
    const choice = await screen.findByTestId('workers-choice');
    expect(choice.textContent).toBe('No worker is alive: start one with ducklm worker (see Workers) to run branches there.');
    expect((screen.getByRole('radio', { name: /On the team's workers/ }) as HTMLInputElement).disabled).toBe(true);
    fireEvent.click(screen.getByRole('button', { name: 'Deliberate' }));
    await waitFor(() => expect(channel.calls('Deliberate')).toHaveLength(1));
    expect(channel.calls('Deliberate')[0]![0]).not.toHaveProperty('onWorkers');
  });

  it('offers nothing on this machine’s SQLite database', async () => {
    const { channel } = open(() => team([], false));
    await waitFor(() => expect(channel.calls('Workers')).toHaveLength(1));
    expect(screen.queryByRole('radiogroup', { name: 'Run the branches' })).toBeNull();
  });
});
