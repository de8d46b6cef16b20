// @vitest-environment jsdom
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BridgeError, NO_TOKEN, type Check, type DucklmApi, type LedgerEvent, type Overview } from '../bridge';
import { checks as someChecks, event, overview as someOverview } from '../test/fixtures';
import { fakeApi as fakeChannelApi } from '../test/fakeChannel';
import { Home } from './Home';

afterEach(cleanup);

interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** fakeApi is a DucklmApi whose answers the test controls. */
function fakeApi(opts: { overview?: () => Promise<Overview>; checks?: () => Promise<Check[]> } = {}) {
  const listeners = new Set<(events: LedgerEvent[]) => void>();
  // Runs and model status answer quietly; this file tests the overview, the feed and the checks.
  const { api: base } = fakeChannelApi({
    Runs: () => [],
    Models: () => ({ host: 'http://127.0.0.1:11434', reachable: true, models: ['llama3.1:8b'], sandboxed: true }),
  });
  const api: DucklmApi = {
    ...base,
    overview: vi.fn(opts.overview ?? (() => Promise.resolve(someOverview()))),
    checks: vi.fn(opts.checks ?? (() => Promise.resolve(someChecks()))),
    onLedgerEvents(cb) {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
  };
  return {
    api,
    emit: (events: LedgerEvent[]) => act(() => listeners.forEach((cb) => cb(events))),
    listeners,
  };
}

const rows = () => screen.queryAllByTestId('event-row');

describe('Home', () => {
  it('shows the overview: paths, schema, counts and recent events', async () => {
    const { api } = fakeApi();
    const onVersion = vi.fn();
    render(<Home api={api} onVersion={onVersion} />);

    expect(await screen.findByText('/home/ada/.local/share/ducklm')).toBeTruthy();
    expect(screen.getByText('/home/ada/.local/share/ducklm/ducklm.db')).toBeTruthy();
    expect(screen.getByTestId('schema').textContent).toBe('2 of 2');
    // What the Runs list and the Worlds screen show, not every world and run the ledger holds.
    expect(screen.getByTestId('count-task-runs').textContent).toBe('5');
    expect(screen.getByTestId('count-simulated-worlds').textContent).toBe('1');
    expect(screen.queryByTestId('count-simulated-worlds-note')).toBeNull();
    expect(screen.getByTestId('count-streams').parentElement!.getAttribute('title')).toBe('Event streams: one per run (7 runs of 3 worlds, task runs included)');
    expect(screen.getByTestId('count-streams').textContent).toBe('10');
    expect(screen.getByTestId('count-events').textContent).toBe('2');
    // Told in an effect, which may run after the text is on the page.
    await waitFor(() => expect(onVersion).toHaveBeenCalledWith('0.3.1'));

    const [newest, older] = rows();
    expect(within(newest!).getByText('tool.finished')).toBeTruthy();
    expect(within(newest!).getByText('{"exitCode":0}')).toBeTruthy();
    expect(within(newest!).getByText('external-real')).toBeTruthy();
    const stream = within(newest!).getByText('run_…2233aaaa');
    expect(stream.getAttribute('title')).toBe('run_0190f0e3c2a47b3d9e8f00112233aaaa');
    expect(within(older!).getByText('run.started')).toBeTruthy();
  });

  it('counts the worlds the Worlds screen lists, and the deliberation branches it leaves out apart', async () => {
    const { api } = fakeApi({
      overview: () => Promise.resolve(someOverview({ counts: { worlds: 102, runs: 102, taskRuns: 1, simulatedWorlds: 1, deliberationBranches: 99, streams: 103, events: 600 } })),
    });
    render(<Home api={api} />);
    await waitFor(() => expect(screen.getByTestId('count-simulated-worlds').textContent).toBe('1'));
    expect(screen.getByTestId('count-simulated-worlds-note').textContent).toBe('and 99 deliberation branches');
    expect(screen.getByTestId('count-simulated-worlds').parentElement!.getAttribute('title')).toBe(
      'Simulated worlds, as listed under Worlds; the 99 deliberation branches are drawn under their rounds in Lineage',
    );
  });

  it('flags a schema that does not match this build', async () => {
    const { api } = fakeApi({ overview: () => Promise.resolve(someOverview({ schemaVersion: 3 })) });
    render(<Home api={api} />);
    const schema = await screen.findByTestId('schema');
    expect(schema.textContent).toBe('3 of 2');
    expect(schema.className).toContain('schema-ahead');
    expect(screen.getByText('written by a newer ducklm')).toBeTruthy();
  });

  it('copies the data directory', async () => {
    const { api } = fakeApi();
    const copy = vi.fn(() => Promise.resolve());
    render(<Home api={api} copy={copy} />);
    fireEvent.click(await screen.findByRole('button', { name: 'Copy data directory path' }));
    expect(copy).toHaveBeenCalledWith('/home/ada/.local/share/ducklm');
    expect(await screen.findByRole('button', { name: 'Copied' })).toBeTruthy();
  });

  it('says so honestly when the ledger is empty', async () => {
    const { api } = fakeApi({
      overview: () =>
        Promise.resolve(someOverview({ counts: { worlds: 0, runs: 0, taskRuns: 0, simulatedWorlds: 0, streams: 0, events: 0 }, recentEvents: [] })),
    });
    render(<Home api={api} />);
    expect(await screen.findByText('No events yet. Events appear here as runs and worlds record them.')).toBeTruthy();
    expect(rows()).toHaveLength(0);
    expect(screen.getByTestId('count-events').textContent).toBe('0');
  });

  it('shows loading checks, then each check with its fix', async () => {
    const pending = deferred<Check[]>();
    const { api } = fakeApi({ checks: () => pending.promise });
    render(<Home api={api} />);
    expect(await screen.findByText('Checking this machine…')).toBeTruthy();

    await act(async () => pending.resolve(someChecks()));
    expect(screen.queryByText('Checking this machine…')).toBeNull();
    expect(screen.getByText('bubblewrap is not installed')).toBeTruthy();
    expect(screen.getByText('sudo apt install bubblewrap')).toBeTruthy();
    expect(screen.getByRole('img', { name: 'Failing' })).toBeTruthy();
    // Models and sandbox, beside it, says whether Ollama answers: the checks do not say it twice.
    expect(screen.getByRole('img', { name: '1 ok, 1 failing' })).toBeTruthy();
    const checks = screen.getByRole('region', { name: 'Machine checks' });
    expect(within(checks).queryByText('Ollama is not running at http://127.0.0.1:11434')).toBeNull();
  });

  it('shows the error sentence and retries', async () => {
    const sentence = 'The data directory /home/ada/.local/share/ducklm is locked by another ducklm.';
    const overview = vi
      .fn<() => Promise<Overview>>()
      .mockRejectedValueOnce(new BridgeError(sentence))
      .mockResolvedValueOnce(someOverview());
    const { api } = fakeApi({ overview });
    render(<Home api={api} />);

    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText(sentence)).toBeTruthy();
    expect(rows()).toHaveLength(0);

    fireEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    await waitFor(() => expect(rows()).toHaveLength(2));
    expect(screen.queryByRole('alert')).toBeNull();
    expect(overview).toHaveBeenCalledTimes(2);
  });

  it('says a page opened without its token needs the printed address, with no Retry that cannot help', async () => {
    const overview = vi.fn<() => Promise<Overview>>().mockRejectedValue(new BridgeError(NO_TOKEN));
    const { api } = fakeApi({ overview });
    render(<Home api={api} />);
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByRole('heading').textContent).toBe('Open the address ducklm serve printed');
    expect(within(alert).getByText(NO_TOKEN)).toBeTruthy();
    expect(within(alert).queryByRole('button', { name: 'Retry' })).toBeNull();
    expect(screen.queryByText('ducklm could not open its data')).toBeNull();
  });

  it('merges live events on top, dedupes them and bumps the count', async () => {
    const { api, emit } = fakeApi();
    render(<Home api={api} />);
    await waitFor(() => expect(rows()).toHaveLength(2));

    emit([
      event({ seq: 2, pos: 2, type: 'tool.finished' }), // redelivered
      event({ seq: 3, pos: 3, type: 'world.forked', reality: 'world_local', payload: { seed: 7 } }),
    ]);

    const all = rows();
    expect(all).toHaveLength(3);
    expect(within(all[0]!).getByText('world.forked')).toBeTruthy();
    expect(within(all[0]!).getByText('world-local')).toBeTruthy();
    expect(all[0]!.className).toBe('live');
    expect(screen.getByTestId('count-events').textContent).toBe('3');

    emit([event({ seq: 3, pos: 3, type: 'world.forked' })]);
    expect(rows()).toHaveLength(3);
    expect(screen.getByTestId('count-events').textContent).toBe('3');
  });

  it('keeps events that arrive while the overview loads', async () => {
    const pending = deferred<Overview>();
    const { api, emit } = fakeApi({ overview: () => pending.promise });
    render(<Home api={api} />);
    emit([event({ seq: 3, pos: 3, type: 'run.completed' })]);
    await act(async () => pending.resolve(someOverview()));

    const all = rows();
    expect(all).toHaveLength(3);
    expect(within(all[0]!).getByText('run.completed')).toBeTruthy();
    expect(screen.getByTestId('count-events').textContent).toBe('3');
  });

  it('replaces an empty state with the first live event', async () => {
    const { api, emit } = fakeApi({
      overview: () =>
        Promise.resolve(someOverview({ counts: { worlds: 0, runs: 1, taskRuns: 1, simulatedWorlds: 0, streams: 1, events: 0 }, recentEvents: [] })),
    });
    render(<Home api={api} />);
    await screen.findByText(/No events yet/);
    emit([event({ seq: 1, pos: 1 })]);
    expect(screen.queryByText(/No events yet/)).toBeNull();
    expect(rows()).toHaveLength(1);
    expect(screen.getByTestId('count-events').textContent).toBe('1');
  });

  it('asks for the counts again, once, after a burst of live events', async () => {
    let worlds = 2;
    const { api, emit } = fakeApi({
      overview: () => Promise.resolve(someOverview({ counts: { worlds: 4, runs: 3, taskRuns: 2, simulatedWorlds: worlds, streams: 3, events: 2 } })),
    });
    render(<Home api={api} />);
    await waitFor(() => expect(screen.getByTestId('count-simulated-worlds').textContent).toBe('2'));
    expect(api.overview).toHaveBeenCalledTimes(1);
    worlds = 3;
    vi.useFakeTimers();
    try {
      emit([event({ seq: 3, pos: 3, type: 'world.forked' })]);
      emit([event({ seq: 4, pos: 4, type: 'world.created' })]);
      await act(async () => {
        await vi.advanceTimersByTimeAsync(1000);
      });
    } finally {
      vi.useRealTimers();
    }
    expect(api.overview).toHaveBeenCalledTimes(2);
    await waitFor(() => expect(screen.getByTestId('count-simulated-worlds').textContent).toBe('3'));
    expect(rows()).toHaveLength(4); // the feed kept the live events
  });

  it('asks the counts again when events arrive while it asks them', async () => {
    // A burst (another installation's run, start to end) can arrive while the counts are asked:
    // the answer may predate it, so the tiles would keep a stale count until some later event.
    let taskRuns = 0;
    let answer: Deferred<Overview> | undefined;
    const { api, emit } = fakeApi({
      overview: () => {
        const counts = { worlds: 1, runs: 1, taskRuns, simulatedWorlds: 0, streams: 1, events: 2 };
        if (!answer) return Promise.resolve(someOverview({ counts }));
        const held = answer;
        answer = undefined;
        return held.promise.then(() => someOverview({ counts }));
      },
    });
    render(<Home api={api} />);
    await waitFor(() => expect(screen.getByTestId('count-task-runs').textContent).toBe('0'));
    vi.useFakeTimers();
    try {
      answer = deferred<Overview>();
      const asked = answer;
      emit([event({ seq: 3, pos: 3, type: 'world.created' })]);
      await act(async () => {
        await vi.advanceTimersByTimeAsync(1000);
      });
      expect(api.overview).toHaveBeenCalledTimes(2); // asked, not answered yet
      taskRuns = 1; // the run is recorded after that question was read, its events arrive meanwhile
      emit([event({ seq: 1, pos: 4, stream: 'run_b', type: 'task.received' })]);
      await act(async () => {
        asked.resolve(someOverview());
        await vi.advanceTimersByTimeAsync(1000);
      });
    } finally {
      vi.useRealTimers();
    }
    expect(api.overview).toHaveBeenCalledTimes(3);
    await waitFor(() => expect(screen.getByTestId('count-task-runs').textContent).toBe('1'));
  });

  it('unsubscribes when it goes away', async () => {
    const { api, listeners } = fakeApi();
    const { unmount } = render(<Home api={api} />);
    await waitFor(() => expect(rows()).toHaveLength(2));
    expect(listeners.size).toBeGreaterThan(0); // the feed, and the runs list's refresh
    unmount();
    expect(listeners.size).toBe(0);
  });
});
