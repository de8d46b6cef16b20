// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeApi } from '../test/fakeChannel';
import { runSummary, worldRun } from '../test/fixtures';
import { RunsPanel } from './RunsPanel';

afterEach(cleanup);

const many = Array.from({ length: 250 }, (_, i) =>
  runSummary({
    run: worldRun({ id: `run_${String(i).padStart(32, '0')}`, status: i === 3 ? 'awaiting_approval' : 'completed' }),
    task: i % 50 === 0 ? `deploy the site, take ${i}` : `tidy the build folder, take ${i}`,
    approvals: i === 3 ? 1 : 0,
  }),
);

describe('RunsPanel', () => {
  it('draws the first hundred runs and more on request', async () => {
    render(<RunsPanel api={fakeApi({ Runs: () => many }).api} />);
    await waitFor(() => expect(screen.getAllByTestId('run-row')).toHaveLength(100));
    const panel = screen.getByRole('region', { name: 'Runs' });
    expect(within(panel).getByText(/250 runs/)).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Show 100 more of 250' }));
    expect(screen.getAllByTestId('run-row')).toHaveLength(200);
    fireEvent.click(screen.getByRole('button', { name: 'Show 50 more of 250' }));
    expect(screen.getAllByTestId('run-row')).toHaveLength(250);
    expect(screen.queryByRole('button', { name: /Show .* more/ })).toBeNull();
  });

  it('marks a fork, so it does not read as its parent', async () => {
    const parent = runSummary({ task: 'tidy', run: worldRun({ id: 'run_00000000000000000000000000000001' }) });
    const child = runSummary({ task: 'tidy', name: 'tidy (edited plan)', run: worldRun({ id: 'run_00000000000000000000000000000002', baseRunId: 'run_00000000000000000000000000000001' }) });
    render(<RunsPanel api={fakeApi({ Runs: () => [child, parent] }).api} />);
    await waitFor(() => expect(screen.getAllByTestId('run-row')).toHaveLength(2));
    const [c, p] = screen.getAllByTestId('run-row');
    expect(within(c!).getByTestId('fork-pill').textContent).toMatch(/^fork of run_/);
    expect(within(p!).queryByTestId('fork-pill')).toBeNull();
    // The fork's own name, as its view heads it (issue 30: the list dropped "(edited plan)").
    expect(within(c!).getByRole('link').textContent).toBe('tidy (edited plan)');
    expect(within(p!).getByRole('link').textContent).toBe('tidy');
  });

  it('says which installation drives a run when another one on the team database does', async () => {
    const theirs = runSummary({ task: 'theirs', run: worldRun({ id: 'run_00000000000000000000000000000001' }), drivenBy: 'host-a' });
    const ours = runSummary({ task: 'ours', run: worldRun({ id: 'run_00000000000000000000000000000002' }) });
    render(<RunsPanel api={fakeApi({ Runs: () => [theirs, ours] }).api} />);
    await waitFor(() => expect(screen.getAllByTestId('run-row')).toHaveLength(2));
    const [t, o] = screen.getAllByTestId('run-row');
    const pill = within(t!).getByTestId('driven-by');
    expect(pill.textContent).toBe('on host-a');
    expect(pill.getAttribute('title')).toBe('Driven by ducklm on host-a: its steps run there, in its workspace');
    expect(within(o!).queryByTestId('driven-by')).toBeNull();
  });

  it('finds runs by task, id or status', async () => {
    render(<RunsPanel api={fakeApi({ Runs: () => many }).api} />);
    const find = await screen.findByRole('searchbox', { name: 'Find a run' });
    fireEvent.change(find, { target: { value: 'DEPLOY' } });
    expect(screen.getAllByTestId('run-row').map((r) => within(r).getByRole('link').textContent)).toEqual([
      'deploy the site, take 0',
      'deploy the site, take 50',
      'deploy the site, take 100',
      'deploy the site, take 150',
      'deploy the site, take 200',
    ]);
    expect(screen.getByText(/5 of\s*250 runs/)).toBeTruthy();
    fireEvent.change(find, { target: { value: 'awaiting approval' } });
    expect(screen.getAllByTestId('run-row')).toHaveLength(1);
    fireEvent.change(find, { target: { value: many[7]!.run.id } });
    expect(screen.getAllByTestId('run-row')).toHaveLength(1);
    fireEvent.change(find, { target: { value: 'nothing like it' } });
    expect(screen.queryAllByTestId('run-row')).toHaveLength(0);
    expect(screen.getByText('No run’s task, id or status contains “nothing like it”.')).toBeTruthy();
  });

  it('has no filter for a short list', async () => {
    render(<RunsPanel api={fakeApi({ Runs: () => many.slice(0, 3) }).api} />);
    await waitFor(() => expect(screen.getAllByTestId('run-row')).toHaveLength(3));
    expect(screen.queryByRole('searchbox')).toBeNull();
  });
});
