// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { EVENT_LEDGER, EVENT_PROGRESS } from '../bridge/channel';
import type { EmbedderChoices, Memory, MemoryDetail, MemoryStatus, ReindexInput, RetrievedMemory } from '../bridge/types';
import { fakeApi } from '../test/fakeChannel';
import { MemoryView } from './MemoryView';

afterEach(cleanup);

const RUN = 'run_0190f0e3a1b2c3d4e5f6a7b8c9d0e1f2';
const WORLD = 'wld_0190f0e3a1b2c3d4e5f6a7b8c9d0aaaa';

function memory(over: Partial<Memory> = {}): Memory {
  return {
    id: 'mem_0190f0e3a1b2c3d4e5f6a7b8c9d00001',
    text: 'For the task "find the nginx port", shell_exec {"command":"ss -ltnp"} printed: nginx listens on 0.0.0.0:8080',
    type: 'observation',
    embeddingModel: 'ducklm-hash-384',
    contentHash: 'ab',
    provenance: { runId: RUN, eventId: 'evt_0190f0e3a1b2c3d4e5f6a7b8c9d0e1aa', reality: 'external_real' },
    weight: 0.78,
    mergedCount: 0,
    createdAt: new Date(Date.now() - 150_000).toISOString(),
    updatedAt: new Date(Date.now() - 150_000).toISOString(),
    ...over,
  };
}

const hypothesis = memory({
  id: 'mem_0190f0e3a1b2c3d4e5f6a7b8c9d00002',
  text: 'In the simulated grid the agent reaches the goal in 14 steps going south first.',
  type: 'hypothesis',
  provenance: { runId: RUN, reality: 'world_local', worldId: WORLD },
});

function status(over: Partial<MemoryStatus> = {}): MemoryStatus {
  return { memories: 2, model: 'ducklm-hash-384', builtin: true, indexed: 2, stale: 0, loadedFrom: 'snapshot', loadTimeNs: 3_000_000, ...over };
}

function detailOf(m: Memory): MemoryDetail {
  return {
    memory: m,
    dimensions: 384,
    sources: [
      { ...m.provenance, criticScore: 0.9, worth: 0.78, addedAt: m.createdAt, stream: RUN, seq: 7, eventType: 'step.finished', step: 'step-1' },
      { runId: 'run_0190f0e3a1b2c3d4e5f6a7b8c9d0ffff', reality: 'external_real', criticScore: 0.8, worth: 0.71, addedAt: m.createdAt },
    ],
  };
}

const choices: EmbedderChoices = {
  current: 'ducklm-hash-384',
  builtin: 'ducklm-hash-384',
  ollama: { host: 'http://127.0.0.1:11434', reachable: true, models: ['qwen2.5:7b', 'nomic-embed-text:latest'], sandboxed: true },
  embedding: ['nomic-embed-text:latest'],
};

function setup(extra: Record<string, (...a: never[]) => unknown> = {}) {
  const { api, channel } = fakeApi({
    MemoryStatus: () => status(),
    ListMemories: () => ({ memories: [memory(), hypothesis], next: '' }),
    SearchMemories: () => [],
    MemoryDetail: (id: string) => detailOf(id === hypothesis.id ? hypothesis : memory()),
    MemoryEmbedders: () => choices,
    ...extra,
  });
  render(<MemoryView api={api} />);
  return channel;
}

const rows = () => screen.findAllByTestId('memory-row');

describe('MemoryView', () => {
  it('says how memories get written when there are none', async () => {
    setup({ MemoryStatus: () => status({ memories: 0, indexed: 0 }), ListMemories: () => ({ memories: null, next: '' }) });
    const empty = await screen.findByTestId('memory-empty');
    expect(empty.textContent).toContain('No memories yet.');
    expect(empty.textContent).toContain('passes the write policy');
    expect(within(empty).getByRole('link', { name: 'Run a task' }).getAttribute('href')).toBe('#/new');
    expect(screen.getByTestId('memory-count').textContent).toBe('0');
  });

  it('shows the status and the newest memories, facts apart from hypotheses', async () => {
    setup();
    expect(await screen.findByTestId('memory-model')).toHaveProperty('textContent', 'ducklm-hash-384');
    expect(screen.getByText('built-in embedder')).toBeTruthy();
    expect(screen.getByText('2 indexed, loaded from its snapshot in 3 ms')).toBeTruthy();
    const [real, sim] = await rows();
    expect(within(real!).getByText('Real')).toBeTruthy();
    expect(within(real!).getByText('observation')).toBeTruthy();
    expect(within(sim!).getByText('Simulated').getAttribute('title')).toContain(WORLD);
    expect(within(sim!).getByText('hypothesis')).toBeTruthy();
    expect(within(real!).getByText('2 min ago')).toBeTruthy();
  });

  it('opens a memory with its full text and links to the runs and events it came from', async () => {
    setup();
    fireEvent.click((await rows())[0]!);
    const text = await screen.findByTestId('memory-text');
    expect(text.textContent).toContain('nginx listens on 0.0.0.0:8080');
    const [first, merged] = screen.getAllByTestId('memory-source');
    expect(within(first!).getByRole('link', { name: 'run_…c9d0e1f2' }).getAttribute('href')).toBe(`#/runs/${RUN}`);
    expect(within(first!).getByRole('link', { name: 'step.finished #7 in the timeline' }).getAttribute('href')).toBe(`#/timeline/${RUN}?seq=7`);
    expect(within(first!).getByText('step-1')).toBeTruthy();
    expect(first!.textContent).toContain('critic score 0.90');
    expect(merged!.textContent).toContain('merged in');
    expect(first!.textContent).toContain('first written');
    expect(within(merged!).queryByText(/in the timeline/)).toBeNull();
    expect(screen.getByText('ducklm-hash-384 (384 dimensions)')).toBeTruthy();
  });

  it('says which URL answered and when, for a fetched page', async () => {
    const page = memory({
      text: 'web_fetch: https://news.example/notes answered 200 at 2026-12-01T18:00:00Z: Duck 2.4 reads web pages.',
      provenance: { runId: RUN, reality: 'external_real', url: 'https://news.example/notes', observedAt: '2026-12-01T18:00:00.123Z' },
    });
    setup({ ListMemories: () => ({ memories: [page], next: '' }), MemoryDetail: () => detailOf(page) });
    fireEvent.click((await rows())[0]!);
    const [first, other] = await screen.findAllByTestId('memory-source');
    const url = within(first!).getByTestId('memory-source-url');
    expect(url.textContent).toContain('https://news.example/notes');
    expect(url.textContent).toMatch(/answered 2026-12-0\d \d\d:\d\d:00/);
    expect(within(url).queryByRole('link')).toBeNull(); // a page of the web never opens inside the window
    expect(within(other!).queryByTestId('memory-source-url')).toBeNull();
  });

  it('searches by meaning with filters and shows each score', async () => {
    const found: RetrievedMemory = { ...memory(), similarity: 0.8345 };
    const channel = setup({ SearchMemories: () => [found] });
    await rows();
    fireEvent.change(screen.getByRole('combobox', { name: 'Type' }), { target: { value: 'observation' } });
    fireEvent.change(screen.getByRole('searchbox', { name: 'Search memories' }), { target: { value: 'which port does nginx use' } });
    fireEvent.click(screen.getByRole('button', { name: 'Search' }));
    expect(await screen.findByText('0.83')).toBeTruthy();
    expect(channel.calls('SearchMemories').at(-1)).toEqual([{ type: 'observation', reality: '', runId: '', query: 'which port does nginx use', k: 50 }]);
    expect(screen.getByText(/Most similar to “which port does nginx use” first/)).toBeTruthy();

    channel.handle('SearchMemories', () => []);
    fireEvent.change(screen.getByRole('combobox', { name: 'Reality' }), { target: { value: 'world_local' } });
    expect((await screen.findByTestId('memory-empty')).textContent).toContain('Nothing matches “which port does nginx use” with these filters');
    fireEvent.click(screen.getByRole('button', { name: 'Clear' }));
    await waitFor(() => expect(channel.calls('ListMemories').at(-1)).toEqual([{ type: '', reality: '', runId: '', limit: 50, before: '' }]));
  });

  it('pages through older memories', async () => {
    const older = memory({ id: 'mem_0190f0e3a1b2c3d4e5f6a7b8c9d00003', text: 'An older memory about logrotate.' });
    const channel = setup({
      ListMemories: (input: { before: string }) =>
        input.before === '' ? { memories: [memory(), hypothesis], next: 'CURSOR' } : { memories: [older], next: '' },
    });
    await rows();
    fireEvent.click(screen.getByRole('button', { name: 'Show 50 older' }));
    await screen.findByText('An older memory about logrotate.');
    expect((await rows()).length).toBe(3);
    expect(channel.calls('ListMemories').at(-1)).toEqual([{ type: '', reality: '', runId: '', limit: 50, before: 'CURSOR' }]);
    expect(screen.queryByRole('button', { name: 'Show 50 older' })).toBeNull();
  });

  it('deletes only after a confirmation, and the list updates', async () => {
    let stored = [memory(), hypothesis];
    const channel = setup({
      ListMemories: () => ({ memories: stored, next: '' }),
      DeleteMemory: (id: string) => {
        stored = stored.filter((m) => m.id !== id);
      },
    });
    fireEvent.click((await rows())[0]!);
    await screen.findByTestId('memory-text');
    fireEvent.click(screen.getByRole('button', { name: 'Delete…' }));
    const confirm = screen.getByRole('group', { name: 'Confirm deletion' });
    expect(confirm.textContent).toContain('cannot be undone');
    fireEvent.click(within(confirm).getByRole('button', { name: 'Keep it' }));
    expect(channel.calls('DeleteMemory')).toEqual([]);

    fireEvent.click(screen.getByRole('button', { name: 'Delete…' }));
    fireEvent.click(screen.getByRole('button', { name: 'Delete memory' }));
    await screen.findByText(/The memory was deleted/);
    expect(channel.calls('DeleteMemory')).toEqual([[memory().id]]);
    await waitFor(async () => expect((await rows()).length).toBe(1));
    expect(screen.queryByTestId('memory-text')).toBeNull();
  });

  it('says why a delete failed, with the next step', async () => {
    setup({
      DeleteMemory: () => {
        throw new Error('there is no memory mem_0190f0e3a1b2c3d4e5f6a7b8c9d00001');
      },
    });
    fireEvent.click((await rows())[0]!);
    await screen.findByTestId('memory-text');
    fireEvent.click(screen.getByRole('button', { name: 'Delete…' }));
    fireEvent.click(screen.getByRole('button', { name: 'Delete memory' }));
    expect((await screen.findByRole('alert')).textContent).toBe(
      'There is no memory mem_0190f0e3a1b2c3d4e5f6a7b8c9d00001. Nothing was deleted; try again.'.replace(/^T/, 't'),
    );
  });

  it('re-embeds with an Ollama model, showing progress live', async () => {
    let finish: (v: unknown) => void = () => {};
    const channel = setup({
      ReindexMemories: () => new Promise((resolve) => (finish = resolve)),
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Change embedding model…' }));
    const select = (await screen.findByRole('combobox', { name: 'Embedding model' })) as HTMLSelectElement;
    await waitFor(() => expect(select.value).toBe('nomic-embed-text:latest'));
    expect([...select.options].map((o) => o.textContent)).toEqual(['Built-in: ducklm-hash-384 (in use)', 'nomic-embed-text:latest', 'qwen2.5:7b']);
    fireEvent.click(screen.getByRole('button', { name: 'Re-embed with nomic-embed-text:latest' }));

    const [[input]] = channel.calls('ReindexMemories') as [[ReindexInput]];
    expect(input.model).toBe('nomic-embed-text:latest');
    expect(input.op).toMatch(/^reindex-/);
    expect(screen.getByTestId('reindex-progress').textContent).toContain('Ollama may be loading it');
    channel.emit(EVENT_PROGRESS, [{ op: 'someone-else', phase: 're-embedding', done: 9, total: 9, unit: 'memories' }]);
    channel.emit(EVENT_PROGRESS, [{ op: input.op, phase: 're-embedding', done: 1, total: 2, unit: 'memories' }]);
    expect(screen.getByTestId('reindex-progress').textContent).toContain('Re-embedded 1 of 2 memories with nomic-embed-text:latest');
    const bar = screen.getByRole('progressbar', { name: 'Re-embedding progress' }) as HTMLProgressElement;
    expect([bar.value, bar.max]).toEqual([1, 2]);

    const statusCalls = channel.calls('MemoryStatus').length;
    channel.handle('MemoryStatus', () => status({ model: 'nomic-embed-text:latest', builtin: false }));
    finish({ model: 'nomic-embed-text:latest', previous: 'ducklm-hash-384', reembedded: 2, indexed: 2, tookNs: 1_500_000_000, settingsSaved: true });
    const done = await screen.findByTestId('reindex-done');
    expect(done.textContent).toBe(
      'Re-embedded 2 memories with nomic-embed-text:latest in 1.5 s. Searches now use nomic-embed-text:latest instead of ducklm-hash-384. Settings now name it as the embedder.',
    );
    await waitFor(() => expect(channel.calls('MemoryStatus').length).toBeGreaterThan(statusCalls));
    expect(await screen.findByText('Ollama embedding model')).toBeTruthy();
  });

  it('says what a failed re-embedding left, and lets it be cancelled', async () => {
    let fail: (e: Error) => void = () => {};
    const channel = setup({
      ReindexMemories: () => new Promise((_, reject) => (fail = reject)),
      CancelReindex: () => true,
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Change embedding model…' }));
    // The dialog picks its default once the models are listed: change the
    // choice after that, or the default may replace it (a flake under load).
    const select = (await screen.findByRole('combobox', { name: 'Embedding model' })) as HTMLSelectElement;
    await waitFor(() => expect(select.value).toBe('nomic-embed-text:latest'));
    fireEvent.change(select, { target: { value: 'qwen2.5:7b' } });
    fireEvent.click(screen.getByRole('button', { name: 'Re-embed with qwen2.5:7b' }));
    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(channel.calls('CancelReindex')).toEqual([[]]);
    expect(screen.getByRole('button', { name: 'Cancelling…' })).toHaveProperty('disabled', true);
    fail(new Error('the re-embedding was cancelled; the memories are still searched with ducklm-hash-384'));
    expect((await screen.findByTestId('reindex-error')).textContent).toBe(
      'the re-embedding was cancelled; the memories are still searched with ducklm-hash-384. Nothing changed: searches still use ducklm-hash-384.',
    );
  });

  it('explains an unreachable Ollama and keeps the built-in embedder on offer', async () => {
    setup({
      MemoryEmbedders: () => ({ ...choices, ollama: { host: 'http://127.0.0.1:11434', reachable: false, error: 'Ollama is not reachable', models: null, sandboxed: true }, embedding: null }),
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Change embedding model…' }));
    expect((await screen.findByText(/Start it with/)).textContent).toContain('the built-in embedder works without it');
    expect(await screen.findByRole('button', { name: 'Already using ducklm-hash-384' })).toHaveProperty('disabled', true);
  });

  it('shows a failed start as a sentence with a retry', async () => {
    const channel = setup({
      MemoryStatus: () => {
        throw new Error('the data directory is locked by another ducklm');
      },
    });
    expect((await screen.findAllByRole('alert'))[0]!.textContent).toContain('the data directory is locked by another ducklm.');
    channel.handle('MemoryStatus', () => status());
    fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByTestId('memory-count')).toHaveProperty('textContent', '2');
  });

  it('says what to do when the Ollama embedder cannot embed a query', async () => {
    setup({
      MemoryStatus: () => status({ model: 'nomic-embed-text:latest', builtin: false }),
      SearchMemories: () => {
        throw new Error('Ollama is not reachable at http://127.0.0.1:11434');
      },
    });
    await rows();
    fireEvent.change(screen.getByRole('searchbox', { name: 'Search memories' }), { target: { value: 'nginx' } });
    fireEvent.click(screen.getByRole('button', { name: 'Search' }));
    expect((await screen.findByRole('alert')).textContent).toContain(
      'Ollama is not reachable at http://127.0.0.1:11434. Searching asks nomic-embed-text:latest for the query\'s vector: start Ollama, or re-embed with the built-in embedder.',
    );
    expect(screen.getByRole('button', { name: 'Change embedding model…' })).toBeTruthy();
  });

  it('refreshes when a run writes a memory', async () => {
    const channel = setup();
    await rows();
    const before = channel.calls('ListMemories').length;
    channel.emit(EVENT_LEDGER, [{ id: 'evt_1', stream: RUN, seq: 9, pos: 9, type: 'memory.decided', payload: {}, reality: 'external_real' }]);
    await waitFor(() => expect(channel.calls('ListMemories').length).toBe(before + 1));
    channel.emit(EVENT_LEDGER, [{ id: 'evt_2', stream: RUN, seq: 10, pos: 10, type: 'step.started', payload: {}, reality: 'external_real' }]);
    expect(channel.calls('ListMemories').length).toBe(before + 1);
    // A step's result that carries its memory decision is a write too; one without is not.
    channel.emit(EVENT_LEDGER, [{ id: 'evt_3', stream: RUN, seq: 11, pos: 11, type: 'step.finished', payload: { step: 's0', ok: true }, reality: 'external_real' }]);
    expect(channel.calls('ListMemories').length).toBe(before + 1);
    channel.emit(EVENT_LEDGER, [{ id: 'evt_4', stream: RUN, seq: 12, pos: 12, type: 'step.finished', payload: { step: 's1', ok: true, memory: { memoryId: 'mem_1' } }, reality: 'external_real' }]);
    await waitFor(() => expect(channel.calls('ListMemories').length).toBe(before + 2));
  });
});
