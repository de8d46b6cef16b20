// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fakeApi } from '../test/fakeChannel';
import { polyfillLayout, typeInto } from '../test/dom';
import { worldRun } from '../test/fixtures';
import { NewTask } from './NewTask';

beforeAll(polyfillLayout);
afterEach(() => {
  cleanup();
  window.location.hash = '';
});

function setup(extra: Record<string, (...a: never[]) => unknown> = {}) {
  return fakeApi({
    Models: () => ({ host: 'http://127.0.0.1:11434', reachable: true, models: ['llama3.1:8b', 'qwen2.5-coder:7b'], sandboxed: true }),
    ToolCatalog: () => [{ name: 'shell_exec', description: 'Run a command', args_schema: {} }],
    ValidatePlan: (plan: string) =>
      plan.includes('nope') ? { valid: false, problems: ['step step-1 uses the unknown tool "nope"'], steps: 0 } : { valid: true, problems: null, steps: 1 },
    SubmitTask: () => worldRun({ id: 'run_new' }),
    ChooseFolder: () => '/home/ada/projects/demo',
    GetSettings: () => ({
      settings: { ollamaHost: '', models: null, approvalMode: '', theme: '' },
      dataDir: '/home/ada/.local/share/ducklm',
      ollamaHost: 'http://127.0.0.1:11434',
      defaultHost: 'http://127.0.0.1:11434',
    }),
    ...extra,
  });
}

const start = () => screen.getByRole('button', { name: 'Start run' }) as HTMLButtonElement;

describe('NewTask', () => {
  it('starts from the defaults in Settings and says so', async () => {
    const { api, channel } = setup({
      GetSettings: () => ({
        settings: { ollamaHost: '', models: { planner: 'llama3.1:8b' }, approvalMode: 'ask_every', theme: '' },
        dataDir: '/home/ada/.local/share/ducklm',
        ollamaHost: 'http://127.0.0.1:11434',
        defaultHost: 'http://127.0.0.1:11434',
      }),
    });
    render(<NewTask api={api} />);
    const every = screen.getByRole('radio', { name: /Ask for every step/ }) as HTMLInputElement;
    await waitFor(() => expect(every.checked).toBe(true));
    expect(every.closest('label')?.textContent).toContain('(default in Settings)');
    const planner = screen.getByRole('combobox', { name: 'Model for the planner' }) as HTMLSelectElement;
    expect(planner.value).toBe('');
    expect(planner.selectedOptions[0]?.textContent).toBe('llama3.1:8b (default)');
    expect((screen.getByRole('combobox', { name: 'Model for the coder' }) as HTMLSelectElement).selectedOptions[0]?.textContent).toBe('automatic (default)');
    expect(screen.getByRole('link', { name: 'Settings' }).getAttribute('href')).toBe('#/settings');

    fireEvent.change(screen.getByRole('textbox', { name: 'Task' }), { target: { value: 'Summarise hostnamectl' } });
    fireEvent.click(start());
    await waitFor(() => expect(channel.calls('SubmitTask')).toHaveLength(1));
    expect(channel.calls('SubmitTask')[0]?.[0]).toMatchObject({ approvalMode: 'ask_every', models: {} });
  });

  it('validates a free-text task as it is typed and submits it', async () => {
    const { api, channel } = setup();
    render(<NewTask api={api} />);
    expect(start().disabled).toBe(true);

    const task = screen.getByRole('textbox', { name: 'Task' });
    fireEvent.change(task, { target: { value: 'Summarise hostnamectl' } });
    expect(start().disabled).toBe(false);
    fireEvent.change(task, { target: { value: '   ' } });
    expect(screen.getByText('Describe the task, or switch to an explicit plan.')).toBeTruthy();
    expect(start().disabled).toBe(true);
    fireEvent.change(task, { target: { value: 'Summarise hostnamectl' } });

    fireEvent.change(screen.getByRole('spinbutton', { name: 'Max steps' }), { target: { value: '0' } });
    expect(screen.getByText('Max steps is a whole number from 1 to 1000.')).toBeTruthy();
    fireEvent.change(screen.getByRole('spinbutton', { name: 'Max steps' }), { target: { value: '12' } });
    fireEvent.change(screen.getByRole('spinbutton', { name: 'Step timeout (s)' }), { target: { value: '30' } });

    await waitFor(() => expect(screen.getAllByRole('option', { name: 'qwen2.5-coder:7b' })).toHaveLength(3));
    fireEvent.change(screen.getByRole('combobox', { name: 'Model for the coder' }), { target: { value: 'qwen2.5-coder:7b' } });
    fireEvent.click(screen.getByRole('radio', { name: /Ask for every step/ }));
    fireEvent.click(screen.getByRole('button', { name: 'Choose…' }));
    await waitFor(() => expect((screen.getByRole('textbox', { name: 'Workspace folder' }) as HTMLInputElement).value).toBe('/home/ada/projects/demo'));

    fireEvent.click(start());
    await waitFor(() => expect(window.location.hash).toBe('#/runs/run_new'));
    expect(channel.calls('SubmitTask')[0]).toEqual([
      {
        task: 'Summarise hostnamectl',
        plan: '',
        approvalMode: 'ask_every',
        models: { coder: 'qwen2.5-coder:7b' },
        workspace: '/home/ada/projects/demo',
        timeoutSeconds: 30,
        maxSteps: 12,
      },
    ]);
  });

  it('checks an explicit plan as it is typed: syntax here, then the backend', async () => {
    const { api, channel } = setup();
    const { container } = render(<NewTask api={api} />);
    fireEvent.click(screen.getByRole('radio', { name: /Explicit plan/ }));

    expect(await screen.findByTestId('plan-valid')).toBeTruthy();
    expect(screen.getByText('Valid plan: 1 step.')).toBeTruthy();
    expect(start().disabled).toBe(false);

    typeInto(container, '{\n  "nodes": [\n    {"id": "step-1",}\n  ]\n}');
    const problem = await screen.findByText(/^JSON syntax: .*\(line 3, column \d+\)$/);
    expect(problem).toBeTruthy();
    expect(start().disabled).toBe(true);
    await waitFor(() => expect(container.querySelector('[data-error-line="3"]')).not.toBeNull());

    typeInto(container, '{"nodes": [{"id": "step-1", "kind": "tool", "tool": "nope", "depends_on": []}]}');
    expect(await screen.findByText('step step-1 uses the unknown tool "nope"')).toBeTruthy();
    expect(start().disabled).toBe(true);
    expect(channel.calls('ValidatePlan').length).toBeGreaterThanOrEqual(2);
  });

  it('shows why a submit failed', async () => {
    const { api } = setup({
      SubmitTask: () => {
        throw new Error('The workspace /root is outside what ducklm may write; choose a folder in your home.');
      },
    });
    render(<NewTask api={api} />);
    fireEvent.change(screen.getByRole('textbox', { name: 'Task' }), { target: { value: 'x' } });
    fireEvent.click(start());
    expect((await screen.findByRole('alert')).textContent).toBe('The workspace /root is outside what ducklm may write; choose a folder in your home.');
    expect(start().disabled).toBe(false);
  });

  it('asks before creating a workspace folder that does not exist, then starts with it', async () => {
    const { api, channel } = setup({
      SubmitTask: (input: { workspace: string; createWorkspace?: boolean }) => {
        if (!input.createWorkspace) throw new Error(`the workspace folder ${input.workspace} does not exist`);
        return worldRun({ id: 'run_new' });
      },
    });
    render(<NewTask api={api} />);
    fireEvent.change(screen.getByRole('textbox', { name: 'Task' }), { target: { value: 'Summarise hostnamectl' } });
    fireEvent.change(screen.getByRole('textbox', { name: 'Workspace folder' }), { target: { value: '/home/ada/new-project' } });
    fireEvent.click(start());

    const ask = await screen.findByTestId('ask-create-workspace');
    expect(ask.textContent).toContain('The workspace folder /home/ada/new-project does not exist. Create it and start the run?');
    expect(window.location.hash).toBe('');
    expect(channel.calls('SubmitTask')[0]?.[0]).not.toHaveProperty('createWorkspace');

    fireEvent.click(screen.getByRole('button', { name: 'Create the folder and start' }));
    await waitFor(() => expect(window.location.hash).toBe('#/runs/run_new'));
    expect(channel.calls('SubmitTask')[1]?.[0]).toMatchObject({ workspace: '/home/ada/new-project', createWorkspace: true });
  });

  it('shows any other refusal as it is, without offering to create a folder', async () => {
    const { api } = setup({
      SubmitTask: () => {
        throw new Error('the workspace cannot be /etc: it is the system\'s /etc folder or inside it; choose a folder of its own, such as one inside your home folder');
      },
    });
    render(<NewTask api={api} />);
    fireEvent.change(screen.getByRole('textbox', { name: 'Task' }), { target: { value: 'x' } });
    fireEvent.change(screen.getByRole('textbox', { name: 'Workspace folder' }), { target: { value: '/etc' } });
    fireEvent.click(start());
    expect(await screen.findByText(/the workspace cannot be \/etc/)).toBeTruthy();
    expect(screen.queryByTestId('ask-create-workspace')).toBeNull();
  });
});

describe('NewTask without a model', () => {
  it('says before submitting that a described task would wait for a model, and offers the choices', async () => {
    let up = false;
    const { api, channel } = setup({
      Models: () =>
        up
          ? { host: 'http://127.0.0.1:11434', reachable: true, models: ['llama3.1:8b'], sandboxed: true }
          : { host: 'http://127.0.0.1:11434', reachable: false, error: 'connection refused', models: null, sandboxed: true },
    });
    render(<NewTask api={api} />);
    fireEvent.change(screen.getByRole('textbox', { name: 'Task' }), { target: { value: 'Summarise what hostnamectl says' } });
    const note = await screen.findByRole('status', { name: 'No model to plan the task' });
    expect(note.textContent).toContain('Ollama does not answer at http://127.0.0.1:11434, so no model can plan this task: started now, the run waits (paused) until one answers.');
    expect(screen.queryByText(/offline planner serves/)).toBeNull();
    expect(within(note).getByRole('link', { name: 'Settings' }).getAttribute('href')).toBe('#/settings');
    expect(screen.getByRole('button', { name: 'Start anyway (it waits for a model)' })).toBeTruthy();

    // A one-liner runs without a model: nothing to warn about.
    fireEvent.change(screen.getByRole('textbox', { name: 'Task' }), { target: { value: '$ hostnamectl' } });
    expect(screen.queryByTestId('no-model')).toBeNull();
    fireEvent.change(screen.getByRole('textbox', { name: 'Task' }), { target: { value: 'Summarise what hostnamectl says' } });

    // Ollama started: Check again asks the backend, and the warning goes.
    up = true;
    fireEvent.click(screen.getByRole('button', { name: 'Check again' }));
    await waitFor(() => expect(screen.queryByTestId('no-model')).toBeNull());
    expect(channel.calls('Models')).toHaveLength(2);
    expect(start()).toBeTruthy();
  });

  it('switches to an explicit plan, or submits anyway', async () => {
    const { api, channel } = setup({ Models: () => ({ host: 'http://127.0.0.1:11434', reachable: true, models: null, sandboxed: true }) });
    render(<NewTask api={api} />);
    fireEvent.change(screen.getByRole('textbox', { name: 'Task' }), { target: { value: 'Tidy the notes' } });
    expect((await screen.findByTestId('no-model')).textContent).toContain('Ollama at http://127.0.0.1:11434 has no models');
    fireEvent.click(screen.getByRole('button', { name: 'Start anyway (it waits for a model)' }));
    await waitFor(() => expect(channel.calls('SubmitTask')).toHaveLength(1));
    cleanup();

    render(<NewTask api={setup({ Models: () => ({ host: 'h', reachable: false, models: null, sandboxed: true }) }).api} />);
    fireEvent.change(screen.getByRole('textbox', { name: 'Task' }), { target: { value: 'Tidy the notes' } });
    fireEvent.click(await screen.findByRole('button', { name: 'Give an explicit plan' }));
    expect((screen.getByRole('radio', { name: /Explicit plan/ }) as HTMLInputElement).checked).toBe(true);
    expect(screen.queryByTestId('no-model')).toBeNull();
  });
});
