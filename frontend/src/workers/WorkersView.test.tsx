// @vitest-environment jsdom
import { cleanup, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { Worker, WorkersView as View } from '../bridge';
import { fakeApi } from '../test/fakeChannel';
import { alive, freeSlots, summary } from './model';
import { WorkersView } from './WorkersView';

const text = (el: Element) => (el.textContent ?? '').replace(/\s+/g, ' ').trim();
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

function worker(over: Partial<Worker> = {}): Worker {
  return {
    id: 'gpu-1-4242-ab12',
    host: 'gpu-1',
    pid: 4242,
    slots: 2,
    version: '0.6.0',
    startedAt: ago(600_000),
    heartbeatAt: ago(3_000),
    stoppedAt: '0001-01-01T00:00:00Z',
    state: 'idle',
    jobs: [],
    done: 12,
    ...over,
  };
}

function view(workers: Worker[], shared = true): View {
  return { shared, workers, heartbeatMs: 5000, lostAfterMs: 15000, now: new Date().toISOString() };
}

afterEach(cleanup);

describe('WorkersView', () => {
  it('says how to start a worker when the database is this machine’s SQLite', async () => {
    const { api } = fakeApi({ Workers: () => ({ ...view([], false), workers: null }) });
    render(<WorkersView api={api} copy={async () => {}} />);
    const empty = await screen.findByTestId('workers-not-shared');
    expect(text(empty)).toContain("This window keeps its data in this machine's SQLite file");
    expect(text(empty)).toContain('DUCKLM_DATABASE_URL=postgres://… ducklm worker --slots 2');
    expect(within(empty).getByRole('link', { name: 'Settings → Database' }).getAttribute('href')).toBe('#/settings/database');
    expect(text(empty)).toContain('docs/team-server.md');
  });

  it('says no worker has joined a shared database yet, with the command', async () => {
    const { api } = fakeApi({ Workers: () => view([]) });
    render(<WorkersView api={api} copy={async () => {}} />);
    const empty = await screen.findByTestId('workers-none');
    expect(text(empty)).toContain('No worker has joined this database yet.');
    expect(text(empty)).toContain('ducklm worker --slots 2');
    expect(text(screen.getByTestId('workers-summary'))).toBe('No worker has joined yet.');
  });

  it('lists workers with their state, heartbeat age, slots and current jobs, and follows them live', async () => {
    const busy = worker({
      id: 'gpu-2-7-cd34',
      host: 'gpu-2',
      pid: 7,
      state: 'working',
      slots: 4,
      jobs: [{ id: 91, kind: 'branches', runId: 'run_parent', label: '8 branches of round 2', startedAt: ago(2_000) }],
    });
    const lost = worker({ id: 'old-1-1-ef56', host: 'old-1', pid: 1, state: 'lost', heartbeatAt: ago(150_000) });
    const { api, channel } = fakeApi({ Workers: () => view([busy, worker(), lost]) });
    render(<WorkersView api={api} copy={async () => {}} />);
    const table = await screen.findByRole('table', { name: 'Workers' });
    const rows = within(table).getAllByRole('row').slice(1) as HTMLTableRowElement[];
    expect(rows.map((r) => r.getAttribute('data-state'))).toEqual(['working', 'idle', 'lost']);
    expect(text(rows[0]!.cells[0]!)).toBe('gpu-2 pid 7 gpu-2-7-cd34 ducklm 0.6.0');
    expect(text(rows[0]!.cells[1]!)).toBe('● Working alive');
    expect(text(rows[0]!.cells[3]!)).toBe('1 of 4 busy');
    const job = within(rows[0]!).getByTestId('worker-job');
    expect(text(job)).toMatch(/^8 branches of round 2 of run_parent · since \d+ s ago$/);
    expect(within(job).getByRole('link', { name: 'run_parent' }).getAttribute('href')).toBe('#/runs/run_parent');
    expect(text(within(rows[1]!).getByTestId('worker-heartbeat'))).toMatch(/^\d+ s ago$/);
    expect(text(rows[2]!.cells[1]!)).toBe('○ Lost not alive');
    expect(text(within(rows[2]!).getByTestId('worker-heartbeat'))).toBe('2 min ago');
    expect(text(screen.getByTestId('workers-summary'))).toBe('2 workers alive: 1 of 6 slots busy.');
    // Done counts jobs, each of several branches: the column says so, and so does the note under the
    // list, so "12" beside a round of 98 branches does not read as a disagreement (issue 30, confusing 4).
    expect(within(table).getAllByRole('columnheader').map(text)).toEqual(['Worker', 'State', 'Last heartbeat', 'Slots', 'Running now', 'Jobs done']);
    expect(text(within(rows[1]!).getByTestId('worker-jobs-done'))).toBe('12');
    expect(text(screen.getByTestId('workers-jobs-note'))).toMatch(
      /^Jobs done counts jobs, not branches: a deliberation sends its branches to the workers in jobs of several, and its round says how many branches it ran\./,
    );

    // The next read (every 2 s) shows what changed.
    channel.handle('Workers', () => view([{ ...busy, state: 'idle', jobs: [], done: 13 }, worker(), lost]));
    await waitFor(() => expect(text(screen.getByTestId('workers-summary'))).toBe('2 workers alive: 0 of 6 slots busy.'), { timeout: 10_000 });
    expect(screen.queryByTestId('worker-job')).toBeNull();
  });

  it('says when the workers cannot be read, keeps the last list and tries again', async () => {
    let fail = true;
    const { api } = fakeApi({
      Workers: () => {
        if (fail) throw new Error('cannot read the team’s workers');
        return view([worker()]);
      },
    });
    render(<WorkersView api={api} copy={async () => {}} />);
    expect(text(await screen.findByRole('alert'))).toBe('The workers could not be read: cannot read the team’s workers. Trying again every 2 s.');
    fail = false;
    await screen.findByRole('table', { name: 'Workers' }, { timeout: 10_000 });
    expect(screen.queryByRole('alert')).toBeNull();
  });
});

describe('workers model', () => {
  it('counts alive workers and their free slots', () => {
    const v = view([
      worker({ state: 'working', slots: 3, jobs: [{ id: 1, kind: 'branches', runId: 'r', label: '', startedAt: ago(0) }] }),
      worker({ state: 'stopped', slots: 8 }),
      worker({ state: 'idle', slots: 1 }),
    ]);
    expect(alive(v).length).toBe(2);
    expect(freeSlots(alive(v))).toBe(3);
    expect(summary(v)).toBe('2 workers alive: 1 of 4 slots busy.');
    expect(summary(view([worker({ state: 'lost' })]))).toBe('No worker is alive now.');
  });
});
