// @vitest-environment jsdom
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as layoutModule from '../lib/layout';
import { fakeApi } from '../test/fakeChannel';
import { approval, event, runDetail } from '../test/fixtures';
import { ApprovalCard } from './ApprovalCard';
import { RunView } from './RunView';

vi.mock('../lib/layout', async (importOriginal) => {
  const real = await importOriginal<typeof layoutModule>();
  return { ...real, layoutDag: vi.fn(real.layoutDag) };
});

afterEach(cleanup);

const RULES = [{ id: 'destructive', level: 'high', description: 'deletes or overwrites files' }];
const RUN = runDetail().run.id;

function card(answer: (input: unknown) => unknown = () => null) {
  const { api, channel } = fakeApi({ Answer: answer });
  const onAnswered = vi.fn();
  render(<ApprovalCard api={api} approval={approval()} rules={RULES as never} onAnswered={onAnswered} />);
  return { channel, onAnswered };
}

describe('ApprovalCard', () => {
  it('shows the exact command, the rule that asked and the sandbox limits', () => {
    card();
    expect(screen.getByTestId('approval-command').textContent).toBe('rm -rf build');
    expect(screen.getByText('high risk')).toBeTruthy();
    expect(screen.getByText('destructive')).toBeTruthy();
    expect(screen.getByText('(deletes or overwrites files)')).toBeTruthy();
    expect(screen.getByText('2 min')).toBeTruthy(); // 120 s arrives as 120e9 ns
    expect(screen.getByTestId('timeout-note').textContent).toBe('then stopped and failed, not retried');
    expect(screen.getByText('1 GiB')).toBeTruthy();
    expect(screen.getByText('bubblewrap')).toBeTruthy();
  });

  it('approves', async () => {
    const { channel, onAnswered } = card();
    fireEvent.click(screen.getByRole('button', { name: 'Approve' }));
    await waitFor(() => expect(onAnswered).toHaveBeenCalledOnce());
    expect(channel.calls('Answer')[0]![0]).toMatchObject({ runId: RUN, requestId: approval().requestId, approve: true, args: '', reason: '' });
  });

  it('denies with a reason', async () => {
    const { channel, onAnswered } = card();
    fireEvent.change(screen.getByRole('textbox', { name: 'Reason for denying' }), { target: { value: 'keep the build' } });
    fireEvent.click(screen.getByRole('button', { name: 'Deny' }));
    await waitFor(() => expect(onAnswered).toHaveBeenCalledOnce());
    expect(channel.calls('Answer')[0]![0]).toMatchObject({ approve: false, reason: 'keep the build', network: false });
  });

  it('edits the arguments, refuses broken JSON, then approves the edit', async () => {
    const { channel, onAnswered } = card();
    fireEvent.click(screen.getByRole('button', { name: 'Edit and approve…' }));
    const editor = screen.getByRole('textbox', { name: 'Edited arguments' }) as HTMLTextAreaElement;
    expect(JSON.parse(editor.value)).toEqual({ command: 'rm -rf build' });

    fireEvent.change(editor, { target: { value: '{"command": ' } });
    expect(screen.getByText(/^The arguments are not valid JSON/)).toBeTruthy();
    expect((screen.getByRole('button', { name: 'Approve edited' }) as HTMLButtonElement).disabled).toBe(true);

    fireEvent.change(editor, { target: { value: '{"command": "rm -rf build/cache"}' } });
    fireEvent.click(screen.getByRole('button', { name: 'Approve edited' }));
    await waitFor(() => expect(onAnswered).toHaveBeenCalledOnce());
    expect(channel.calls('Answer')[0]![0]).toMatchObject({ approve: true, args: '{"command": "rm -rf build/cache"}' });
  });

  it('keeps an answer begun when the card is drawn again, and forgets it once answered', async () => {
    const { api } = fakeApi({ Answer: () => null });
    const onAnswered = vi.fn();
    const a = { ...approval(), requestId: 'apr_0000000000000000000000000000draft' };
    const first = render(<ApprovalCard api={api} approval={a} rules={RULES as never} onAnswered={onAnswered} />);
    fireEvent.click(screen.getByRole('button', { name: 'Edit and approve…' }));
    fireEvent.change(screen.getByRole('textbox', { name: 'Edited arguments' }), { target: { value: '{"command": "rm -rf build/cache"}' } });
    fireEvent.change(screen.getByRole('textbox', { name: 'Reason for denying' }), { target: { value: 'maybe' } });
    first.unmount(); // the run view left (the timeline) or drew its cards anew
    const again = render(<ApprovalCard api={api} approval={a} rules={RULES as never} onAnswered={onAnswered} />);
    expect((screen.getByRole('textbox', { name: 'Edited arguments' }) as HTMLTextAreaElement).value).toBe('{"command": "rm -rf build/cache"}');
    expect((screen.getByRole('textbox', { name: 'Reason for denying' }) as HTMLInputElement).value).toBe('maybe');
    fireEvent.click(screen.getByRole('button', { name: 'Approve edited' }));
    await waitFor(() => expect(onAnswered).toHaveBeenCalledOnce());
    again.unmount();
    render(<ApprovalCard api={api} approval={a} rules={RULES as never} onAnswered={onAnswered} />);
    expect(screen.queryByRole('textbox', { name: 'Edited arguments' })).toBeNull();
    expect((screen.getByRole('textbox', { name: 'Reason for denying' }) as HTMLInputElement).value).toBe('');
  });

  it('shows the backend sentence when the answer fails, and answers with the same key again', async () => {
    const answer = vi.fn().mockRejectedValueOnce(new Error('run x has no open approval request y (it was answered or the run moved on)')).mockResolvedValueOnce(null);
    const { channel, onAnswered } = card(answer);
    fireEvent.click(screen.getByRole('button', { name: 'Approve' }));
    expect((await screen.findByRole('alert')).textContent).toContain('it was answered or the run moved on');
    expect(onAnswered).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole('button', { name: 'Approve' }));
    await waitFor(() => expect(onAnswered).toHaveBeenCalledOnce());
    const [first, second] = channel.calls('Answer').map((c) => (c[0] as { idempotencyKey: string }).idempotencyKey);
    expect(first).toBe(second);
  });
});

describe('ApprovalCard after outside content', () => {
  it('names the page the step was planned after', () => {
    const { api } = fakeApi({ Answer: () => null });
    render(<ApprovalCard api={api} approval={{ ...approval(), untrusted: ['the web page https://ducks.example/'] }} rules={RULES as never} onAnswered={vi.fn()} />);
    expect(screen.getByTestId('approval-untrusted').textContent).toContain('planned after the run read the web page https://ducks.example/');
  });
});

describe('ApprovalCard for a file_write', () => {
  const write = (current: unknown, args: unknown = { path: 'notes.txt', content: 'one\nthree\n' }) => {
    const { api } = fakeApi({ Answer: () => null });
    render(<ApprovalCard api={api} approval={approval({ tool: 'file_write', rule: 'file_write', args, ...(current ? { current } : {}) } as never)} rules={RULES as never} onAnswered={() => {}} />);
  };

  it('shows the change to a file that exists as a line diff, not only the path', () => {
    write({ exists: true, content: 'one\ntwo\n', bytes: 8 });
    expect(screen.getByTestId('file-change-head').textContent).toBe('Replaces (now 8 B) notes.txt');
    const diff = screen.getByTestId('file-diff');
    expect([...diff.querySelectorAll('.diff-removed')].map((e) => e.textContent)).toEqual(['- two\n']);
    expect([...diff.querySelectorAll('.diff-added')].map((e) => e.textContent)).toEqual(['+ three\n']);
    expect(screen.getByText('1 line removed, 1 added')).toBeTruthy();
  });

  it('shows the whole content of a file it creates', () => {
    write({ exists: false, bytes: 0 });
    expect(screen.getByText(/^Creates/)).toBeTruthy();
    // The path is not inside the upper-cased label (it read CREATES NOTES.TXT).
    expect(screen.getByText('notes.txt').closest('.field-label')).toBeNull();
    expect(screen.getByText('Creates').className).toBe('field-label');
    expect(screen.getByTestId('file-content').textContent).toBe('one\nthree\n');
  });

  it('once approved, says so with no buttons and no diff against what the step has written since', async () => {
    const { api } = fakeApi({ Answer: () => null });
    const before = approval({ tool: 'file_write', rule: 'file_write', args: { path: 'notes.txt', content: 'one\ntwo\n' }, current: { exists: false, bytes: 0 } } as never);
    const { rerender } = render(<ApprovalCard api={api} approval={before} rules={RULES as never} onAnswered={() => {}} />);
    fireEvent.click(screen.getByRole('button', { name: 'Approve' }));
    expect((await screen.findByRole('status')).textContent).toBe('Approved: the step runs.');
    // A run view read just after the step ran still lists the request, with the file as the step left it.
    const after = { ...before, current: { exists: true, content: 'one\ntwo\n', bytes: 8 } };
    rerender(<ApprovalCard api={api} approval={after} rules={RULES as never} onAnswered={() => {}} />);
    expect(screen.queryByTestId('file-diff')).toBeNull();
    expect(screen.queryByText('The file already holds exactly this.')).toBeNull();
    expect(screen.queryByRole('button')).toBeNull();
  });

  it('says ducklm writes the file itself and shows no process limits that do not hold it', () => {
    const { api } = fakeApi({ Answer: () => null });
    const a = approval({ tool: 'file_write', rule: 'file_write', args: { path: 'n.txt', content: 'x' }, confinement: 'workspace' } as never);
    render(<ApprovalCard api={api} approval={a} rules={RULES as never} onAnswered={() => {}} />);
    expect(screen.getByTestId('confinement').textContent).toBe("in ducklm itself, inside the run's workspace only");
    expect(screen.queryByText('bubblewrap')).toBeNull();
    for (const gone of ['Memory', 'CPU', 'Processes']) expect(screen.queryByText(gone)).toBeNull();
    for (const kept of ['Timeout', 'Largest file', 'Output']) expect(screen.getByText(kept)).toBeTruthy();
  });

  it('says a web_fetch runs in a web worker, sandboxed or not, under its memory and CPU limits', () => {
    const { api } = fakeApi({ Answer: () => null });
    const a = approval({ tool: 'web_fetch', rule: 'web_new_host', args: { url: 'https://example.com/' }, confinement: 'web_worker', sandboxed: true } as never);
    render(<ApprovalCard api={api} approval={a} rules={RULES as never} onAnswered={() => {}} />);
    expect(screen.getByTestId('confinement').textContent).toBe(
      "in a web worker process, under the step's time and memory limits, reaching only the hosts approved for it through ducklm",
    );
    expect(screen.getByTestId('approval-sandbox').textContent).toBe('bubblewrap');
    for (const kept of ['Timeout', 'Memory', 'CPU']) expect(screen.getByText(kept)).toBeTruthy();
    for (const gone of ['Processes', 'Largest file']) expect(screen.queryByText(gone)).toBeNull();
    cleanup();
    render(<ApprovalCard api={api} approval={{ ...a, sandboxed: false }} rules={RULES as never} onAnswered={() => {}} />);
    expect(screen.getByTestId('approval-sandbox').textContent).toBe('none: runs on this machine as you');
  });

  it('shows an append as the lines it adds at the end', () => {
    write({ exists: true, content: 'one\n', bytes: 4 }, { path: 'log.txt', content: 'two\n', append: true });
    expect(screen.getByText(/^Appends to/)).toBeTruthy();
    const diff = screen.getByTestId('file-diff');
    expect([...diff.querySelectorAll('.diff-added')].map((e) => e.textContent)).toEqual(['+ two\n']);
    expect(diff.querySelectorAll('.diff-removed')).toHaveLength(0);
  });
});

describe('RunView', () => {
  function view() {
    const detail = vi.fn(() => runDetail());
    const { api, channel } = fakeApi({ RunDetail: detail, RiskRules: () => RULES, Answer: () => null, CancelRun: () => null });
    render(<RunView api={api} runId={RUN} />);
    return { channel, detail };
  }

  it('draws the task graph with each step state and the open approval', async () => {
    view();
    const graph = await screen.findByRole('group', { name: 'Task graph' });
    expect(within(graph).getByRole('button', { name: 'step-1: done' })).toBeTruthy();
    expect(within(graph).getByRole('button', { name: 'step-2: awaiting approval' })).toBeTruthy();
    expect(within(graph).getByRole('button', { name: 'step-3: pending' })).toBeTruthy();
    expect(screen.getAllByTestId('approval-card')).toHaveLength(1);
    // The waiting step is shown first.
    expect(within(screen.getByTestId('step-panel')).getByText('awaiting approval')).toBeTruthy();
  });

  it('shows a step with its output, files and critic score when clicked, without laying the graph out again', async () => {
    view();
    const graph = await screen.findByRole('group', { name: 'Task graph' });
    const layouts = vi.mocked(layoutModule.layoutDag).mock.calls.length;
    fireEvent.click(within(graph).getByRole('button', { name: 'step-1: done' }));
    const panel = screen.getByTestId('step-panel');
    expect(within(panel).getByTestId('stdout').textContent).toBe('Static hostname: ada-laptop\n');
    expect(within(panel).getByTestId('stderr').textContent).toBe('warning: something minor\n');
    expect(within(panel).getByText('notes/host.txt')).toBeTruthy();
    // The fixture's critique is the heuristic's: its score, said to be a rule of thumb (as the timeline says it).
    expect(within(panel).getByTestId('critique').textContent).toContain("rule of thumb, not a model's judgement");
    expect(within(panel).getByText('0.80')).toBeTruthy();
    expect(within(panel).queryByText(/Not scored/)).toBeNull();
    expect(within(panel).getByText('The output names the host.')).toBeTruthy();
    fireEvent.click(within(graph).getByRole('button', { name: 'step-3: pending' }));
    expect(vi.mocked(layoutModule.layoutDag).mock.calls.length).toBe(layouts);
  });

  it("shows a critic model's score with its model, in the panel and on the graph", async () => {
    const base = runDetail().state!;
    const s1 = base.steps['step-1']!;
    const d = runDetail({
      state: { ...base, steps: { ...base.steps, 'step-1': { ...s1, critique: { step: 'step-1', score: 0.8, explanation: 'The output names the host.', source: 'model', model: 'qwen2.5:7b' } } } },
    });
    const { api } = fakeApi({ RunDetail: () => d, RiskRules: () => RULES, SearchHistory: () => ({ total: 0, inherited: 0, from: 0, next: 0, matches: [] }) });
    render(<RunView api={api} runId={RUN} />);
    const graph = await screen.findByRole('group', { name: 'Task graph' });
    expect(graph.textContent).toContain('0.80');
    fireEvent.click(within(graph).getByRole('button', { name: 'step-1: done' }));
    const critique = within(screen.getByTestId('step-panel')).getByTestId('critique');
    expect(within(critique).getByText('0.80')).toBeTruthy();
    expect(critique.textContent).toContain('model · qwen2.5:7b');
  });

  it('shows the answer first, each step it rests on opening that step', async () => {
    const base = runDetail().state!;
    const d = runDetail({
      state: {
        ...base,
        response: 'The host is ada-laptop.',
        answer: { text: 'The host is ada-laptop.', cites: ['step-1', 'step-3'], model: 'qwen2.5:7b', review: 1 },
      },
    });
    const { api } = fakeApi({ RunDetail: () => d, RiskRules: () => RULES, SearchHistory: () => ({ total: 0, inherited: 0, from: 0, next: 0, matches: [] }) });
    render(<RunView api={api} runId={RUN} />);
    const answer = await screen.findByTestId('run-answer');
    expect(within(answer).getByText('The host is ada-laptop.')).toBeTruthy();
    expect(answer.textContent).toContain('by qwen2.5:7b');
    expect(answer.textContent).toContain('after review 1');
    // The answer comes before the graph.
    const graph = screen.getByRole('group', { name: 'Task graph' });
    expect(answer.compareDocumentPosition(graph) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    fireEvent.click(within(answer).getByRole('button', { name: 'step-3' }));
    expect(within(screen.getByTestId('step-panel')).getByText('pending')).toBeTruthy();
    fireEvent.click(within(answer).getByRole('button', { name: 'step-1' }));
    expect(within(screen.getByTestId('step-panel')).getByTestId('stdout').textContent).toBe('Static hostname: ada-laptop\n');
  });

  it('says who cancelled a cancelled run, and offers nothing to approve in it', async () => {
    const base = runDetail().state!;
    const d = runDetail({ run: { ...runDetail().run, status: 'terminated' }, state: { ...base, status: 'terminated', statusReason: 'Cancelled from the window.' }, approvals: [] });
    const { api } = fakeApi({ RunDetail: () => d, RiskRules: () => RULES, SearchHistory: () => ({ total: 0, inherited: 0, from: 0, next: 0, matches: [] }) });
    render(<RunView api={api} runId={RUN} />);
    expect((await screen.findByTestId('cancelled-why')).textContent).toBe('Cancelled from the window.');
    expect(screen.queryByRole('button', { name: 'Approve' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Cancel run' })).toBeNull();
  });

  it("offers Deliberate… on a world_search step's world and opens the dialog on it", async () => {
    const base = runDetail().state!;
    const s1 = base.steps['step-1']!;
    const search = {
      ...s1,
      node: { ...s1.node, tool: 'world_search', title: 'Search the grid', args: { example: 'branching_grid' } },
      critique: undefined,
      result: {
        ...s1.result!,
        stdoutTail: undefined,
        stderrTail: undefined,
        filesChanged: undefined,
        output: { world: 'wld_sim', run: 'run_sim', deliberationIndex: 1, chosen: 'E', line: ['E', 'S', 'S'], act: true },
      },
    };
    const d = runDetail({ state: { ...base, steps: { ...base.steps, 'step-1': search } }, approvals: [] });
    const { api, channel } = fakeApi({
      RunDetail: () => d,
      RiskRules: () => RULES,
      SearchHistory: () => ({ total: 0, inherited: 0, from: 0, next: 0, matches: [] }),
      Deliberate: () => new Promise(() => {}),
      CancelDeliberation: () => true,
    });
    render(<RunView api={api} runId={RUN} />);
    const graph = await screen.findByRole('group', { name: 'Task graph' });
    fireEvent.click(within(graph).getByRole('button', { name: 'step-1: done' }));
    const result = within(screen.getByTestId('step-panel')).getByTestId('search-result');
    expect(result.textContent).toContain('chose E; its line is E S S (3 moves, taken as the steps step-1-move-1…)');
    expect(within(result).getByRole('link', { name: 'Open the world' }).getAttribute('href')).toBe('#/worlds/run_sim');
    fireEvent.click(within(result).getByRole('button', { name: 'Deliberate…' }));
    const dialog = screen.getByRole('dialog', { name: 'Deliberate' });
    expect(dialog.textContent).toContain("The task's world: search forks of this world");
    fireEvent.click(within(dialog).getByRole('button', { name: 'Deliberate' }));
    await waitFor(() => expect(channel.calls('Deliberate')).toHaveLength(1));
    expect(channel.calls('Deliberate')[0]![0]).toMatchObject({ runId: 'run_sim' });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(channel.calls('CancelDeliberation')).toHaveLength(1));
  });

  it('reads the run again when the ledger records an event of it', async () => {
    const { channel, detail } = view();
    await screen.findByRole('group', { name: 'Task graph' });
    const before = detail.mock.calls.length;
    channel.emit('ledger:events', [event({ seq: 13, pos: 99, stream: 'run_other' })]);
    channel.emit('ledger:events', [event({ seq: 13, pos: 100, stream: RUN, type: 'step.started' })]);
    await waitFor(() => expect(detail.mock.calls.length).toBe(before + 1));
  });

  it('cancels the run', async () => {
    const { channel } = view();
    fireEvent.click(await screen.findByRole('button', { name: 'Cancel run' }));
    await waitFor(() => expect(channel.calls('CancelRun')).toEqual([[RUN]]));
  });

  it('streams planner tokens while there is no plan', async () => {
    const d = runDetail({ state: { ...runDetail().state!, status: 'running', graph: undefined, steps: {} }, approvals: [] });
    const { api, channel } = fakeApi({ RunDetail: () => d, RiskRules: () => [] });
    render(<RunView api={api} runId={RUN} />);
    await screen.findByText('No plan yet: the planner is working on one.');
    channel.emit('run:tokens', [{ runId: RUN, text: 'First I will ' }, { runId: 'run_else', text: 'nope' }]);
    channel.emit('run:tokens', [{ runId: RUN, text: 'list the folder.' }]);
    expect(screen.getByTestId('planner-tokens').textContent).toBe('First I will list the folder.');
  });

  it('shows each planning attempt with its options, answer, mending and error, and the revision', async () => {
    const base = runDetail().state!;
    const d = runDetail({
      state: {
        ...base,
        status: 'completed',
        planning: [
          { attempt: 1, model: 'tiny', options: { temperature: 0 }, answer: '{"decision":"fail","confidence":4}', normalised: ['confidence 4 is outside 0–1: taken as 1'], error: 'step "s" uses tool "teleport", which is not available' },
          { attempt: 2, model: 'tiny', options: { temperature: 0.3, seed: 1 }, answer: '{"decision":"plan"}', accepted: true },
          { attempt: 3, revision: 1, model: 'tiny', options: { temperature: 0.6, seed: 2 }, answer: '{"plan":{}}', accepted: true },
        ],
        revised: [{ round: 1, failed: ['step-2'], kept: ['step-1'], rule: 'revise', reason: 'Step "step-2" failed, so tiny revises the plan around it, keeping the finished steps (revision 1 of 1).' }],
      },
      approvals: [],
    });
    d.state!.invalidPlan = 'the last answer was not JSON';
    const { api } = fakeApi({ RunDetail: () => d, RiskRules: () => [] });
    render(<RunView api={api} runId={RUN} />);
    const panel = await screen.findByTestId('planning');
    expect(screen.queryByText(/the planner is trying again/), 'a finished run does not say the planner is trying again').toBeNull();
    expect(within(panel).getByText('3 attempts · 1 refused · 1 revision')).toBeTruthy();
    const first = within(panel).getByTestId('attempt-1');
    expect(within(first).getByText('temperature 0')).toBeTruthy();
    expect(within(first).getByText('refused')).toBeTruthy();
    expect(within(first).getByText('Mended: confidence 4 is outside 0–1: taken as 1')).toBeTruthy();
    expect(within(first).getByText(/uses tool "teleport"/)).toBeTruthy();
    expect(within(first).getByText('{"decision":"fail","confidence":4}')).toBeTruthy();
    expect(within(within(panel).getByTestId('attempt-2')).getByText('temperature 0.3, seed 1')).toBeTruthy();
    const rev = within(panel).getByTestId('revision-1');
    expect(rev.textContent).toContain('Step "step-2" failed, so tiny revises the plan');
    expect(rev.textContent).toContain('Kept as they ran: step-1.');
    expect(within(panel).getByRole('listitem', { name: 'Revision 1' })).toBeTruthy();
  });

  it('shows the review rounds after the plan, each with why it was asked and what the model answered', async () => {
    const base = runDetail().state!;
    const d = runDetail({
      state: {
        ...base,
        status: 'completed',
        planning: [
          { attempt: 1, model: 'tiny', answer: '{"decision":"plan"}', accepted: true },
          { attempt: 1, review: 1, model: 'tiny', answer: '{"decision":"plan","plan":{}}', accepted: true },
          { attempt: 1, review: 2, model: 'tiny', answer: '{"decision":"respond","cites":["step-1"]}', accepted: true },
        ],
        reviews: [
          { round: 1, kept: ['step-1'], reason: 'Every step of the plan is done, so tiny reads their results to answer the task (review 1 of 4).' },
          { round: 2, kept: ['step-1', 'step-2'], reason: 'Every step of the plan is done, so tiny reads their results to answer the task (review 2 of 4).' },
        ],
      },
      approvals: [],
    });
    const { api } = fakeApi({ RunDetail: () => d, RiskRules: () => [] });
    render(<RunView api={api} runId={RUN} />);
    const panel = await screen.findByTestId('planning');
    expect(within(panel).getByText('3 attempts · 2 reviews')).toBeTruthy();
    const rounds = within(panel).getAllByRole('listitem').filter((li) => li.classList.contains('planning-round'));
    expect(rounds.map((r) => r.getAttribute('aria-label'))).toEqual(['First plan', 'Review 1', 'Review 2']);
    expect(within(panel).getByTestId('review-2').textContent).toContain('(review 2 of 4)');
  });

  it('shows a finished file_write with its content and its approval history: as asked, as approved, who, when', async () => {
    const base = runDetail().state!;
    const node = { id: 'w', kind: 'tool', tool: 'file_write', args: { path: 'a.txt', content: 'A' }, depends_on: [], title: 'write a' };
    const d = runDetail({
      run: { ...runDetail().run, status: 'completed' },
      state: { ...base, status: 'completed', graph: { nodes: [node] }, steps: { w: { node, state: 'done', attempts: 1, approved: true, approvedArgs: { path: 'a.txt', content: 'B' }, network: false } } },
      approvals: [],
    });
    const events = [
      event({ seq: 3, pos: 3, type: 'step.approval_requested', payload: { requestId: 'apr_1', step: 'w', args: node.args, rule: 'file_write', risk: 'medium' } }),
      event({ seq: 4, pos: 4, type: 'step.approved', payload: { requestId: 'apr_1', step: 'w', args: { path: 'a.txt', content: 'B' }, by: 'cli', network: false } }),
    ];
    const { api, channel } = fakeApi({
      RunDetail: () => d,
      RiskRules: () => [],
      SearchHistory: () => ({ total: 9, inherited: 0, from: 0, next: 9, matches: events.map((e, i) => ({ index: i, event: e })) }),
    });
    render(<RunView api={api} runId={RUN} />);
    const panel = await screen.findByTestId('step-panel');
    expect(within(panel).getByTestId('file-content').textContent).toBe('B');
    const history = await within(panel).findByTestId('approval-history');
    expect(within(history).getByTestId('approval-answer').textContent).toMatch(/^Approved with edited arguments in the CLI, /);
    expect(JSON.parse(within(history).getByTestId('args-asked').textContent!)).toEqual({ path: 'a.txt', content: 'A' });
    expect(JSON.parse(within(history).getByTestId('args-approved').textContent!)).toEqual({ path: 'a.txt', content: 'B' });
    expect(channel.calls('SearchHistory')[0]![1]).toMatchObject({ types: ['step.approval_requested', 'step.approved', 'step.denied'] });
  });

  const NEEDS = 'natural-language tasks need a model: start Ollama (ollama serve) or give an explicit plan';
  function paused(models: () => unknown) {
    const d = runDetail({
      run: { ...runDetail().run, status: 'paused' },
      state: { ...runDetail().state!, status: 'paused', statusReason: NEEDS, needsModel: true, graph: undefined, steps: {} },
      approvals: [],
    });
    const { api, channel } = fakeApi({ RunDetail: () => d, RiskRules: () => [], Models: models, ResumeRun: () => null });
    render(<RunView api={api} runId={RUN} />);
    return channel;
  }

  it('paused for a model without Ollama: says what to do, never that the planner works, and offers no Resume', async () => {
    const channel = paused(() => ({ host: 'http://127.0.0.1:11434', reachable: false, error: 'connection refused', models: null, sandboxed: false }));
    const next = await screen.findByTestId('next-step');
    await within(next).findByText(/^connection refused\. Resume cannot help/);
    expect(within(next).getByRole('link', { name: /choose the Ollama host and a planning model in Settings/ }).getAttribute('href')).toBe('#/settings');
    expect(within(next).getByRole('link', { name: 'New task' })).toBeTruthy();
    expect(screen.queryByText(/planner is working/)).toBeNull();
    expect(screen.getByText('No plan yet: the run is paused, and nothing plans it until it goes on.')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Resume' })).toBeNull();
    expect(screen.getByRole('button', { name: 'Cancel run' })).toBeTruthy();
    expect(channel.calls('Models')).toHaveLength(1);
    // Its duration stops while it waits; the header says for how long it has waited.
    expect(screen.getByTestId('waiting-for').textContent).toMatch(/^waiting \d/);
  });

  it('reads "paused for want of a model" from the backend\'s flag, not from the sentence', async () => {
    const d = runDetail({
      run: { ...runDetail().run, status: 'paused' },
      state: { ...runDetail().state!, status: 'paused', statusReason: NEEDS, needsModel: false, graph: undefined, steps: {} },
      approvals: [],
    });
    const { api, channel } = fakeApi({ RunDetail: () => d, RiskRules: () => [], Models: () => ({ host: 'h', reachable: false, models: null, sandboxed: false }), ResumeRun: () => null });
    render(<RunView api={api} runId={RUN} />);
    await screen.findByRole('button', { name: 'Resume' });
    expect(screen.queryByText(/Resume cannot help/)).toBeNull();
    expect(channel.calls('Models')).toHaveLength(0);
  });

  it('paused for a model that is reachable now: offers Resume', async () => {
    const channel = paused(() => ({ host: 'http://127.0.0.1:11434', reachable: true, models: [{ name: 'qwen2.5:7b' }], sandboxed: false }));
    fireEvent.click(await screen.findByRole('button', { name: 'Resume' }));
    expect(screen.getByText(/A model is reachable now/)).toBeTruthy();
    await waitFor(() => expect(channel.calls('ResumeRun')).toEqual([[RUN]]));
  });

  it('a run another installation drives: says who drives it, answers say they wait for it, and no Resume', async () => {
    const elsewhere = 'This run is driven by ducklm on host-a; it goes on when that installation is running.';
    const paused = runDetail({ run: { ...runDetail().run, status: 'paused' }, state: { ...runDetail().state!, status: 'paused' }, drivenElsewhere: elsewhere });
    const { api } = fakeApi({ RunDetail: () => paused, RiskRules: () => RULES, Answer: () => null, Models: () => ({ host: 'h', reachable: true, models: [{ name: 'm' }], sandboxed: false }) });
    render(<RunView api={api} runId={RUN} />);
    expect((await screen.findByTestId('driven-elsewhere')).textContent).toBe(elsewhere);
    expect(screen.queryByRole('button', { name: 'Resume' })).toBeNull();
    expect(screen.getByRole('button', { name: 'Cancel run' })).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Approve' }));
    expect((await screen.findByTestId('approval-answered')).textContent).toContain(`Answered. ${elsewhere}`);
  });

  it('shows a denied step as denied and offers a fork with the current plan from the run view', async () => {
    const base = runDetail().state!;
    const reason = 'The run cannot go on: you denied "step-2", and ducklm does not plan around a no. Fork the run before the step with an edited plan';
    const d = runDetail({
      run: { ...runDetail().run, status: 'failed', error: reason, latestCheckpointId: 'cp_latest' },
      state: {
        ...base,
        status: 'failed',
        statusReason: reason,
        error: reason,
        steps: { ...base.steps, 'step-2': { ...base.steps['step-2']!, approval: undefined, state: 'failed', denied: true, error: 'denied by the user: keep the build' } },
      },
      approvals: [],
    });
    const forked = { fork: { id: 'frk_1' }, world: { id: 'wld_child', name: 'x' }, run: { id: 'run_child' } };
    const { api, channel } = fakeApi({ RunDetail: () => d, RiskRules: () => [], ValidatePlan: () => ({ valid: true, problems: [], steps: 3 }), Fork: () => forked });
    render(<RunView api={api} runId={RUN} />);
    const graph = await screen.findByRole('group', { name: 'Task graph' });
    expect(within(graph).getByRole('button', { name: 'step-2: denied' })).toBeTruthy();
    const panel = screen.getByTestId('step-panel');
    expect(within(panel).getByText('denied')).toBeTruthy();
    expect(within(panel).getByTestId('step-denied').textContent).toBe('You denied this step: keep the build. It did not run.');
    const next = screen.getByTestId('next-step');
    expect(within(next).getByText('You denied step-2')).toBeTruthy();

    fireEvent.click(within(next).getByRole('button', { name: 'Fork with an edited plan…' }));
    const dialog = screen.getByRole('dialog', { name: 'Fork this run with an edited plan' });
    expect(within(dialog).queryByText(/seed/i)).toBeNull();
    expect(within(dialog).queryByText(/world/i)).toBeNull();
    const plan = within(dialog).getByRole('textbox', { name: 'Plan (JSON)' }) as HTMLTextAreaElement;
    expect(JSON.parse(plan.value).nodes.map((n: { id: string }) => n.id)).toEqual(['step-1', 'step-2', 'step-3']);
    const name = within(dialog).getByRole('textbox', { name: 'Name of the new run' }) as HTMLInputElement;
    expect(name.value).toBe('Clean the build folder (edited plan)');
    const edited = JSON.stringify({ nodes: [JSON.parse(plan.value).nodes[0]] });
    fireEvent.change(plan, { target: { value: edited } });
    await within(dialog).findByText('3 steps, valid.');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Fork with this plan' }));
    await waitFor(() => expect(channel.calls('Fork')).toHaveLength(1));
    expect(channel.calls('Fork')[0]![0]).toMatchObject({ checkpointId: 'cp_latest', parentRunId: RUN, divergence: 'plan_edit', delta: edited, name: 'Clean the build folder (edited plan)' });
    await waitFor(() => expect(window.location.hash).toBe('#/runs/run_child'));
    window.location.hash = '';
  });

  it('says why a run cannot be opened', async () => {
    const { api } = fakeApi({ RunDetail: () => Promise.reject(new Error('there is no run run_x')), RiskRules: () => [] });
    render(<RunView api={api} runId="run_x" />);
    expect(await screen.findByText('there is no run run_x')).toBeTruthy();
    await act(async () => {});
  });
});
