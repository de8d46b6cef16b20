// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ModelInfo, Settings, SettingsProblem, TrustedSigner } from '../bridge';
import { fakeApi } from '../test/fakeChannel';
import { theme } from '../ui/theme';
import { SettingsView } from './SettingsView';

const DATA_DIR = '/home/ada/.local/share/ducklm';
const LOCAL = 'http://127.0.0.1:11434';
const GPU = 'http://gpu-box:11434';

/** Fingerprints: 64 hex digits, and as people read them, in groups of four. */
const group = (fp: string) => fp.match(/.{4}/g)!.join(' ');
const OWN = '0f'.repeat(32);
const OWN_FORMATTED = group(OWN);
const ADA = 'ab'.repeat(32);
const BOB = 'cd'.repeat(32);
const signer = (fingerprint: string, note: string): TrustedSigner => ({ fingerprint, formatted: group(fingerprint), note });

const stored = (over: Partial<Settings> = {}): Settings => ({ ollamaHost: '', models: {}, approvalMode: '', theme: '', ...over });

function info(host: string, models: string[] | null): ModelInfo {
  return models === null
    ? {
        host,
        reachable: false,
        error: `Ollama is not reachable at ${host} (connection refused); start it with \`ollama serve\`, or correct the Ollama host in Settings`,
        models: [],
        sandboxed: true,
      }
    : { host, reachable: true, models, sandboxed: true };
}

/** A backend whose Ollama answers at LOCAL and GPU with these models; anything else is unreachable. */
function backend(settings: Settings = stored(), opts: { problems?: (s: Settings) => SettingsProblem[]; signers?: TrustedSigner[] } = {}) {
  const models: Record<string, string[]> = {
    [LOCAL]: ['qwen2.5:7b', 'llama3.2:3b', 'nomic-embed-text:latest'],
    [GPU]: ['qwen2.5:32b', 'mxbai-embed-large:latest'],
  };
  let current = settings;
  if (settings.ollamaHost !== '') throw new Error('the fake starts on the default host');
  let inUse = LOCAL;
  // As ollama.ParseHost reads a host: http and port 11434 unless given.
  const url = (h: string) => {
    const u = new URL(h.includes('://') ? h : `http://${h}`);
    return `${u.protocol}//${u.hostname}:${u.port || '11434'}`;
  };
  const problems = opts.problems ?? (() => []);
  let signers = [...(opts.signers ?? [])];
  return fakeApi({
    MCPServers: () => null, // Go's nil: none added (ToolsSection's own tests cover the section)
    TrustedSigners: () => ({ own: OWN_FORMATTED, ownFingerprint: OWN, signers, file: `${DATA_DIR}/trusted_keys` }),
    ForgetSigner: (fp: string) => {
      const before = signers.length;
      signers = signers.filter((s) => s.fingerprint !== fp);
      return signers.length < before;
    },
    GetSettings: () => ({ settings: current, dataDir: DATA_DIR, ollamaHost: inUse, defaultHost: LOCAL }),
    GetDatabase: () => ({ address: '', passwordStored: false, inUse: `${DATA_DIR}/ducklm.db`, shared: false, override: '', overrideAddress: '', nextStart: '' }),
    TestOllama: (host: string) => info(url(host), models[url(host)] ?? null),
    CheckSettings: (s: Settings) => {
      const p = problems(s);
      return { valid: p.length === 0, problems: p };
    },
    SaveSettings: (s: Settings) => {
      const p = problems(s);
      if (p.length > 0) throw new Error(p[0]!.message);
      current = s;
      inUse = s.ollamaHost === '' ? LOCAL : url(s.ollamaHost);
      return { settings: s, ollamaHost: inUse };
    },
  });
}

const html = () => document.documentElement.getAttribute('data-theme');

beforeEach(() => {
  localStorage.clear();
  theme().set('light');
});
afterEach(cleanup);

describe('SettingsView', () => {
  it('tests the Ollama in use at once and lists its models, fitted to each role', async () => {
    const { api, channel } = backend();
    render(<SettingsView api={api} checkDelayMs={0} />);

    const result = await screen.findByTestId('ollama-reachable');
    expect(result.textContent).toContain(`Ollama at ${LOCAL} lists 3 models`);
    expect(within(screen.getByRole('list', { name: 'Models found' })).getAllByRole('listitem').map((li) => li.textContent)).toEqual([
      'qwen2.5:7b',
      'llama3.2:3b',
      'nomic-embed-text:latest',
    ]);
    expect(channel.calls('TestOllama')).toEqual([[LOCAL]]);
    expect(screen.getByTestId('host-in-use').textContent).toBe(LOCAL);
    expect(screen.getByRole('textbox', { name: 'Data directory' })).toHaveProperty('value', DATA_DIR);

    const planner = screen.getByLabelText('Default model for the planner') as HTMLSelectElement;
    const options = (sel: HTMLSelectElement) => [...sel.options].map((o) => o.value);
    expect(options(planner), 'a chat role is never offered an embedding model').toEqual(['', 'qwen2.5:7b', 'llama3.2:3b']);
    const embedder = screen.getByLabelText('Default model for the embedder') as HTMLSelectElement;
    expect(options(embedder)).toEqual(['', 'ducklm-hash-384', 'nomic-embed-text:latest', 'qwen2.5:7b', 'llama3.2:3b']);
    expect(screen.queryByTestId('models-free-text')).toBeNull();
    expect(screen.getByTestId('save-status').textContent).toBe('No unsaved changes.');
    expect(screen.getByRole('button', { name: 'Save' })).toHaveProperty('disabled', true);
  });

  it('saves a default model per role, says so, and is clean again', async () => {
    const { api, channel } = backend(stored({ models: { critic: 'llama3.2:3b' } }));
    render(<SettingsView api={api} checkDelayMs={0} />);
    const planner = (await screen.findByLabelText('Default model for the planner')) as HTMLSelectElement;
    await screen.findByTestId('ollama-reachable');
    expect((screen.getByLabelText('Default model for the critic') as HTMLSelectElement).value, 'the stored choice is selected').toBe('llama3.2:3b');

    fireEvent.change(planner, { target: { value: 'qwen2.5:7b' } });
    fireEvent.click(screen.getByRole('radio', { name: /Ask for every step/ }));
    expect(screen.getByTestId('save-status').textContent).toMatch(/^Unsaved changes/);
    const save = screen.getByRole('button', { name: 'Save' });
    await waitFor(() => expect(save).toHaveProperty('disabled', false));
    fireEvent.click(save);

    await waitFor(() => expect(screen.getByTestId('save-status').textContent).toBe(`✓ Saved. ducklm now uses the Ollama at ${LOCAL}.`));
    expect(channel.calls('SaveSettings')).toEqual([
      [stored({ models: { planner: 'qwen2.5:7b', critic: 'llama3.2:3b' }, approvalMode: 'ask_every' })],
    ]);
    expect(save).toHaveProperty('disabled', true);
    expect(screen.getByRole('button', { name: 'Revert' })).toHaveProperty('disabled', true);
  });

  it("keeps a task's world_search on this machine when asked, and says what each choice does", async () => {
    const { api, channel } = backend(stored());
    render(<SettingsView api={api} checkDelayMs={0} />);
    const group = await screen.findByRole('radiogroup', { name: 'Task steps' });
    expect((within(group).getByRole('radio', { name: "On the team's workers" }) as HTMLInputElement).checked).toBe(true);
    expect(screen.getByTestId('task-steps-help').textContent).toMatch(/runs its branches on the team's workers when one is alive/);
    fireEvent.click(within(group).getByRole('radio', { name: 'Here' }));
    expect(screen.getByTestId('task-steps-help').textContent).toMatch(/always runs its branches in this process/);
    const save = screen.getByRole('button', { name: 'Save' });
    await waitFor(() => expect(save).toHaveProperty('disabled', false));
    fireEvent.click(save);
    await waitFor(() => expect(screen.getByTestId('save-status').textContent).toMatch(/^✓ Saved/));
    expect(channel.calls('SaveSettings')).toEqual([[stored({ taskSteps: 'here' })]]);
  });

  it('sets the memory limit of world programs, refusing one out of range with the backend sentence', async () => {
    const sentence = 'the memory limit of world programs is 32 MiB; choose from 64 to 65536 MiB (or leave it empty for 512)';
    const { api, channel } = backend(stored(), {
      problems: (s) => (s.worldMemoryMiB !== undefined && s.worldMemoryMiB < 64 ? [{ field: 'worldMemoryMiB', message: sentence }] : []),
    });
    render(<SettingsView api={api} checkDelayMs={0} />);
    const limit = (await screen.findByLabelText('Memory limit (MiB)')) as HTMLInputElement;
    expect(limit.value, 'empty is the default').toBe('');
    expect(limit.placeholder).toBe("512 (ducklm's default)");

    fireEvent.change(limit, { target: { value: '32' } });
    expect((await screen.findByTestId('world-memory-problem')).textContent).toBe(sentence);
    expect(limit.getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByRole('button', { name: 'Save' })).toHaveProperty('disabled', true);

    fireEvent.change(limit, { target: { value: '1024' } });
    await waitFor(() => expect(screen.queryByTestId('world-memory-problem')).toBeNull());
    const save = screen.getByRole('button', { name: 'Save' });
    await waitFor(() => expect(save).toHaveProperty('disabled', false));
    fireEvent.click(save);
    await waitFor(() => expect(screen.getByTestId('save-status').textContent).toMatch(/^✓ Saved/));
    expect(channel.calls('SaveSettings')).toEqual([[stored({ worldMemoryMiB: 1024 })]]);

    fireEvent.change(limit, { target: { value: '' } });
    expect(screen.getByTestId('save-status').textContent, 'emptying it goes back to the default: a change').toMatch(/^Unsaved changes/);
  });

  it('sets how many times a run reviews its results and the critic threshold for new tasks', async () => {
    const { api, channel } = backend(stored());
    render(<SettingsView api={api} checkDelayMs={0} />);
    const reviews = (await screen.findByLabelText('Review rounds')) as HTMLInputElement;
    const threshold = screen.getByLabelText('Critic threshold') as HTMLInputElement;
    expect(reviews.placeholder).toBe("4 (ducklm's default)");
    expect(threshold.placeholder).toBe("0.5 (ducklm's default)");
    fireEvent.change(reviews, { target: { value: '2' } });
    fireEvent.change(threshold, { target: { value: '0.7' } });
    const save = screen.getByRole('button', { name: 'Save' });
    await waitFor(() => expect(save).toHaveProperty('disabled', false));
    fireEvent.click(save);
    await waitFor(() => expect(screen.getByTestId('save-status').textContent).toMatch(/^✓ Saved/));
    expect(channel.calls('SaveSettings')).toEqual([[stored({ maxReviews: 2, criticThreshold: 0.7 })]]);
  });

  it('reverts to what is stored', async () => {
    const { api } = backend(stored({ approvalMode: 'auto_sandboxed' }));
    render(<SettingsView api={api} checkDelayMs={0} />);
    const host = await screen.findByLabelText('Ollama host');
    fireEvent.change(host, { target: { value: 'gpu-box' } });
    fireEvent.click(screen.getByRole('radio', { name: /Ask for risky steps/ }));
    // With changes to save, the bar floats over the cards; settled, it only ends the screen.
    const bar = screen.getByRole('region', { name: 'Save settings' });
    expect(bar.className).toContain('floating');
    fireEvent.click(screen.getByRole('button', { name: 'Revert' }));
    expect(bar.className).not.toContain('floating');
    expect(host).toHaveProperty('value', '');
    expect(screen.getByRole('radio', { name: /Run sandboxed steps/ })).toHaveProperty('checked', true);
    expect(screen.getByTestId('save-status').textContent).toBe('No unsaved changes.');
  });

  it('refuses a bad host as it is typed, with the backend sentence', async () => {
    const sentence = '"ftp://box" is not an Ollama host: Ollama speaks http or https, not ftp; type host:port, e.g. 127.0.0.1:11434';
    const { api, channel } = backend(stored(), {
      problems: (s) => (s.ollamaHost.startsWith('ftp:') ? [{ field: 'ollamaHost', message: sentence }] : []),
    });
    render(<SettingsView api={api} checkDelayMs={0} />);
    const host = await screen.findByLabelText('Ollama host');
    fireEvent.change(host, { target: { value: 'ftp://box' } });

    expect((await screen.findByTestId('host-problem')).textContent).toBe(sentence);
    expect(host.getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByRole('button', { name: 'Save' })).toHaveProperty('disabled', true);
    expect(screen.getByRole('button', { name: 'Test connection' })).toHaveProperty('disabled', true);
    expect(screen.getByTestId('save-status').textContent).toBe('Fix the field marked in red to save.');
    expect(channel.calls('CheckSettings').at(-1)).toEqual([stored({ ollamaHost: 'ftp://box' })]);

    fireEvent.change(host, { target: { value: 'gpu-box' } });
    await waitFor(() => expect(screen.queryByTestId('host-problem')).toBeNull());
    expect(screen.getByRole('button', { name: 'Save' })).toHaveProperty('disabled', false);
  });

  it('tests a typed host before it is saved, and saving puts it in use', async () => {
    const { api, channel } = backend();
    render(<SettingsView api={api} checkDelayMs={0} />);
    await screen.findByTestId('ollama-reachable');
    fireEvent.change(screen.getByLabelText('Ollama host'), { target: { value: 'gpu-box' } });
    expect(screen.getByTestId('ollama-test').textContent, 'the last test was of another host').toContain('test again for the host typed now');

    fireEvent.click(screen.getByRole('button', { name: 'Test connection' }));
    await waitFor(() => expect(screen.getByTestId('ollama-reachable').textContent).toContain(`Ollama at ${GPU} lists 2 models`));
    expect(channel.calls('TestOllama').at(-1)).toEqual(['gpu-box']);
    const planner = screen.getByLabelText('Default model for the planner') as HTMLSelectElement;
    expect([...planner.options].map((o) => o.value)).toEqual(['', 'qwen2.5:32b']);
    fireEvent.change(planner, { target: { value: 'qwen2.5:32b' } });

    const save = screen.getByRole('button', { name: 'Save' });
    await waitFor(() => expect(save).toHaveProperty('disabled', false));
    fireEvent.click(save);
    await waitFor(() => expect(screen.getByTestId('host-in-use').textContent).toBe(GPU));
    expect(screen.getByTestId('save-status').textContent).toBe(`✓ Saved. ducklm now uses the Ollama at ${GPU}.`);
  });

  it('says why an unreachable host does not answer, and lets models be typed, marked as unchecked', async () => {
    const { api } = backend(stored({ models: { coder: 'deepseek-coder:6.7b' } }));
    render(<SettingsView api={api} checkDelayMs={0} />);
    await screen.findByTestId('ollama-reachable');
    fireEvent.change(screen.getByLabelText('Ollama host'), { target: { value: '127.0.0.1:1' } });
    fireEvent.click(screen.getByRole('button', { name: 'Test connection' }));

    const why = await screen.findByTestId('ollama-unreachable');
    expect(why.textContent).toBe(
      '✗ Ollama is not reachable at http://127.0.0.1:1 (connection refused); start it with `ollama serve`, or correct the Ollama host in Settings',
    );
    expect(screen.getByTestId('models-free-text').textContent).toContain('typed, not chosen from a list');
    const coder = screen.getByLabelText('Default model for the coder') as HTMLInputElement;
    expect(coder.tagName).toBe('INPUT');
    expect(coder.value).toBe('deepseek-coder:6.7b');
    fireEvent.change(coder, { target: { value: 'qwen2.5-coder:7b' } });
    expect(coder.value).toBe('qwen2.5-coder:7b');
  });

  it('marks a stored model that this Ollama does not have, with the pull that fixes it', async () => {
    const { api } = backend(stored({ models: { coder: 'deepseek-coder:6.7b' } }));
    render(<SettingsView api={api} checkDelayMs={0} />);
    await screen.findByTestId('ollama-reachable');
    const coder = screen.getByLabelText('Default model for the coder') as HTMLSelectElement;
    expect(coder.value).toBe('deepseek-coder:6.7b');
    expect(coder.selectedOptions[0]?.textContent).toBe('deepseek-coder:6.7b (not in this Ollama)');
    expect(screen.getByText(`deepseek-coder:6.7b is not in the Ollama at ${LOCAL}: run ollama pull deepseek-coder:6.7b, or choose another.`)).toBeTruthy();
  });

  it('shows a theme at once, keeps it when saved and drops it when left unsaved', async () => {
    const { api } = backend();
    const first = render(<SettingsView api={api} checkDelayMs={0} />);
    await screen.findByLabelText('Ollama host');
    expect(html()).toBe('light');
    fireEvent.click(screen.getByRole('radio', { name: 'Dark' }));
    expect(html(), 'previewed before saving').toBe('dark');
    first.unmount();
    expect(html(), 'leaving without saving shows the stored theme').toBe('light');

    render(<SettingsView api={api} checkDelayMs={0} />);
    await screen.findByLabelText('Ollama host');
    fireEvent.click(screen.getByRole('radio', { name: 'Dark' }));
    const save = screen.getByRole('button', { name: 'Save' });
    await waitFor(() => expect(save).toHaveProperty('disabled', false));
    fireEvent.click(save);
    await screen.findByText(/Saved\. ducklm now uses/);
    cleanup();
    expect(html(), 'a saved theme stays').toBe('dark');
    expect(localStorage.getItem('ducklm.theme'), 'remembered for the next start').toBe('dark');
  });

  it('shows the sentence of a refused save and stays dirty', async () => {
    const { api, channel } = backend();
    channel.handle('SaveSettings', () => {
      throw new Error('cannot write the settings in /home/ada/.local/share/ducklm');
    });
    render(<SettingsView api={api} checkDelayMs={0} />);
    fireEvent.click(await screen.findByRole('radio', { name: 'Light' }));
    fireEvent.click(screen.getByRole('radio', { name: 'Dark' }));
    const save = screen.getByRole('button', { name: 'Save' });
    await waitFor(() => expect(save).toHaveProperty('disabled', false));
    fireEvent.click(save);
    await waitFor(() =>
      expect(screen.getByTestId('save-status').textContent).toBe('Not saved: cannot write the settings in /home/ada/.local/share/ducklm'),
    );
    expect(save).toHaveProperty('disabled', false);
  });

  it('copies the data directory', async () => {
    const { api } = backend();
    const copy = vi.fn(async () => {});
    render(<SettingsView api={api} copy={copy} checkDelayMs={0} />);
    fireEvent.click(await screen.findByRole('button', { name: 'Copy data directory' }));
    expect(copy).toHaveBeenCalledWith(DATA_DIR);
    expect(await screen.findByRole('button', { name: 'Copied' })).toBeTruthy();
  });

  it('says why the settings did not open, and tries again', async () => {
    const { api, channel } = backend();
    channel.handle('GetSettings', () => {
      throw new Error('the data directory was written by a newer ducklm');
    });
    render(<SettingsView api={api} checkDelayMs={0} />);
    expect((await screen.findByRole('alert')).textContent).toContain('the data directory was written by a newer ducklm');
    channel.handle('GetSettings', () => ({ settings: stored(), dataDir: DATA_DIR, ollamaHost: LOCAL, defaultHost: LOCAL }));
    fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByLabelText('Ollama host')).toBeTruthy();
  });

  describe('trusted signers', () => {
    const signersList = () => screen.findByRole('list', { name: 'Trusted signers' });
    const entries = async () =>
      within(await signersList())
        .getAllByRole('listitem')
        .map((li) => li.getAttribute('aria-label'));

    it('shows the fingerprint this installation signs with, and copies it', async () => {
      const { api } = backend();
      const copy = vi.fn(async () => {});
      render(<SettingsView api={api} copy={copy} checkDelayMs={0} />);
      expect((await screen.findByTestId('own-fingerprint')).textContent).toBe(OWN_FORMATTED);
      expect(screen.getByText('Your bundles are signed as')).toBeTruthy();
      fireEvent.click(screen.getByRole('button', { name: 'Copy your signing fingerprint' }));
      expect(copy).toHaveBeenCalledWith(OWN_FORMATTED);
    });

    it('lists the trusted signers with their notes, in order', async () => {
      const { api } = backend(stored(), { signers: [signer(ADA, 'trusted from the window for grid.ducklm'), signer(BOB, '')] });
      render(<SettingsView api={api} checkDelayMs={0} />);
      expect(await entries()).toEqual([group(ADA), group(BOB)]);
      const ada = screen.getByRole('listitem', { name: group(ADA) });
      expect(ada.textContent).toContain('trusted from the window for grid.ducklm');
      expect(screen.getByRole('listitem', { name: group(BOB) }).textContent).toContain('No note');
      expect(screen.queryByTestId('signers-empty')).toBeNull();
    });

    it('says how a signer becomes trusted when none is', async () => {
      const { api } = backend();
      render(<SettingsView api={api} checkDelayMs={0} />);
      const empty = await screen.findByTestId('signers-empty');
      expect(empty.textContent).toContain('import one of its bundles and choose “Trust this signer from now on”');
      expect(empty.textContent).toContain(`${DATA_DIR}/trusted_keys`);
    });

    it('stops trusting a signer only after a confirmation, and the entry goes', async () => {
      const { api, channel } = backend(stored(), { signers: [signer(ADA, 'ada'), signer(BOB, 'bob')] });
      render(<SettingsView api={api} checkDelayMs={0} />);
      await signersList();
      const ada = screen.getByRole('listitem', { name: group(ADA) });

      fireEvent.click(within(ada).getByRole('button', { name: 'Stop trusting…' }));
      const confirm = within(ada).getByRole('group', { name: 'Confirm stop trusting' });
      expect(confirm.textContent).toContain('Its bundles will ask again before they import');
      fireEvent.click(within(confirm).getByRole('button', { name: 'Keep trusting' }));
      expect(channel.calls('ForgetSigner')).toEqual([]);
      expect(within(ada).queryByRole('group')).toBeNull();

      fireEvent.click(within(ada).getByRole('button', { name: 'Stop trusting…' }));
      fireEvent.click(within(ada).getByRole('button', { name: 'Stop trusting' }));
      expect((await screen.findByText(/is no longer trusted/)).textContent).toBe(
        `${group(ADA)} is no longer trusted: its bundles ask again before they import.`,
      );
      expect(channel.calls('ForgetSigner')).toEqual([[ADA]]);
      await waitFor(async () => expect(await entries()).toEqual([group(BOB)]));
      expect(channel.calls('SaveSettings')).toEqual([]);
    });

    it('says why a signer could not stop being trusted, and keeps it', async () => {
      const { api, channel } = backend(stored(), { signers: [signer(ADA, 'ada')] });
      channel.handle('ForgetSigner', () => {
        throw new Error(`cannot write ${DATA_DIR}/trusted_keys`);
      });
      render(<SettingsView api={api} checkDelayMs={0} />);
      await signersList();
      fireEvent.click(screen.getByRole('button', { name: 'Stop trusting…' }));
      fireEvent.click(screen.getByRole('button', { name: 'Stop trusting' }));
      const alert = await within(screen.getByRole('group', { name: 'Confirm stop trusting' })).findByRole('alert');
      expect(alert.textContent).toBe(`cannot write ${DATA_DIR}/trusted_keys. It is still trusted; try again.`);
      expect(await entries()).toEqual([group(ADA)]);
      expect(screen.getByRole('button', { name: 'Stop trusting' })).toHaveProperty('disabled', false);
    });

    it('says why the list could not be read, and reads it again', async () => {
      const { api, channel } = backend();
      const damaged = `line 2 of ${DATA_DIR}/trusted_keys is not a key fingerprint (64 hex digits, spaces and colons allowed)`;
      channel.handle('TrustedSigners', () => {
        throw new Error(damaged);
      });
      render(<SettingsView api={api} checkDelayMs={0} />);
      const alert = await screen.findByRole('alert');
      expect(alert.textContent).toContain(`The trusted signers could not be read: ${damaged}.`);
      expect(screen.getByLabelText('Ollama host')).toBeTruthy();
      channel.handle('TrustedSigners', () => ({ own: OWN_FORMATTED, ownFingerprint: OWN, signers: null, file: `${DATA_DIR}/trusted_keys` }));
      fireEvent.click(within(alert).getByRole('button', { name: 'Try again' }));
      expect(await screen.findByTestId('signers-empty')).toBeTruthy();
      expect(screen.queryByRole('alert')).toBeNull();
    });
  });
});
