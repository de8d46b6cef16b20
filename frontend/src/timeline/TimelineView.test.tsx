// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeApi } from '../test/fakeChannel';
import { event, worldRun, worldSpec } from '../test/fixtures';
import { TimelineView } from './TimelineView';

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

function setup() {
  const { api, channel } = fakeApi({
    History: (_run: string, offset: number, limit: number) => ({ total: history.length, offset, events: history.slice(offset, offset + limit), inherited: 3 }),
    WorldDetail: () => ({ world: worldSpec({ name: 'grid / east' }), run: worldRun({ id: OWN }), runs: [], checkpoints: [] }),
  });
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
  });

  it('filters by type, reality and text, and explains a broken regex', async () => {
    setup();
    await waitFor(() => expect(rows()).toHaveLength(6));

    fireEvent.change(screen.getByRole('combobox', { name: 'Event type' }), { target: { value: 'world.step' } });
    expect(seqs()).toEqual(['2', '2']);
    expect(screen.getByText('2 of 6 events match')).toBeTruthy();

    fireEvent.change(screen.getByRole('combobox', { name: 'Event type' }), { target: { value: '' } });
    fireEvent.change(screen.getByRole('combobox', { name: 'Reality' }), { target: { value: 'external_real' } });
    expect(rows()).toHaveLength(0);
    expect(screen.getByText('No event matches the filters.')).toBeTruthy();
    fireEvent.change(screen.getByRole('combobox', { name: 'Reality' }), { target: { value: 'all' } });

    fireEvent.change(screen.getByRole('searchbox', { name: 'Search events' }), { target: { value: 'moved' } });
    expect(seqs()).toEqual(['3']);

    fireEvent.click(screen.getByRole('checkbox', { name: 'regex' }));
    fireEvent.change(screen.getByRole('searchbox', { name: 'Search events' }), { target: { value: '"action":"[NE]"' } });
    expect(seqs()).toEqual(['2', '2']);
    fireEvent.change(screen.getByRole('searchbox', { name: 'Search events' }), { target: { value: '(' } });
    expect(screen.getByRole('alert').textContent).toMatch(/not a valid regular expression/);
  });

  it('jumps to a seq and says when the filters hide it', async () => {
    setup();
    await waitFor(() => expect(rows()).toHaveLength(6));
    fireEvent.change(screen.getByRole('textbox', { name: 'Jump to seq' }), { target: { value: '3' } });
    fireEvent.click(screen.getByRole('button', { name: 'Jump' }));
    await waitFor(() => expect(rows().find((r) => r.className.includes('selected'))?.textContent).toContain('world.event'));
    expect(screen.getByRole('complementary', { name: 'Event' })).toBeTruthy();

    fireEvent.change(screen.getByRole('combobox', { name: 'Event type' }), { target: { value: 'world.step' } });
    fireEvent.click(screen.getByRole('button', { name: 'Jump' }));
    expect(screen.getByRole('alert').textContent).toBe('Seq 3 is hidden by the filters; clear them to see it.');
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
});
