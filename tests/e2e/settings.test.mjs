// Journeys through Settings: test the connection to Ollama and see its
// models, choose a default model per role and find them kept after a reload
// (and in the New task form), see who bundles are signed as and stop
// trusting a signer, switch to the dark theme and see it on every screen,
// and point the host at an address where nothing answers. The
// journeys share one data directory and run in order.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { appReady, go, journey, screenshot, shellPlan, startStack } from './harness.mjs';

/** The models tests/e2e/ollama-script.json makes the fake Ollama list. */
const FAKE_MODELS = ['qwen2.5:7b', 'nomic-embed-text:latest'];

const theme = (page) => page.evaluate(() => document.documentElement.getAttribute('data-theme'));

describe('Settings', { timeout: 180_000 }, () => {
  let stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.stop();
  });

  it('tests the connection, saves a default model per role and keeps them after a reload', async () => {
    await journey(stack, 'settings-models', async (page) => {
      // The first load settles before the hash changes: a hash change while
      // the app first mounts can be missed.
      await appReady(page);
      await go(stack, page, '#/settings');
      await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
      const found = page.getByRole('list', { name: 'Models found' });
      await page.getByRole('button', { name: 'Test connection' }).click();
      await page.getByTestId('ollama-reachable').getByText(`${stack.ollamaUrl}`, { exact: false }).waitFor();
      assert.deepEqual(await found.getByRole('listitem').allTextContents(), FAKE_MODELS);
      assert.equal(await page.getByTestId('host-in-use').textContent(), stack.ollamaUrl);

      const planner = page.getByRole('combobox', { name: 'Default model for the planner' });
      assert.deepEqual(
        await planner.locator('option').evaluateAll((os) => os.map((o) => o.value)),
        ['', 'qwen2.5:7b'],
        'the planner is offered the chat model, not the embedding model',
      );
      await planner.selectOption('qwen2.5:7b');
      await page.getByRole('combobox', { name: 'Default model for the critic' }).selectOption('qwen2.5:7b');
      await page.getByRole('combobox', { name: 'Default model for the embedder' }).selectOption('nomic-embed-text:latest');
      await page.getByRole('radio', { name: /Ask for every step/ }).check();
      await page.getByText('Unsaved changes', { exact: false }).waitFor();
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByTestId('save-status').getByText('Saved. ducklm now uses the Ollama at', { exact: false }).waitFor();

      const stored = await stack.call('GetSettings');
      assert.deepEqual(stored.settings.models, { planner: 'qwen2.5:7b', critic: 'qwen2.5:7b', embedder: 'nomic-embed-text:latest' });
      assert.equal(stored.settings.approvalMode, 'ask_every');

      await page.reload();
      await page.getByTestId('ollama-reachable').waitFor();
      assert.equal(await planner.inputValue(), 'qwen2.5:7b');
      assert.equal(await page.getByRole('combobox', { name: 'Default model for the critic' }).inputValue(), 'qwen2.5:7b');
      assert.equal(await page.getByRole('combobox', { name: 'Default model for the embedder' }).inputValue(), 'nomic-embed-text:latest');
      assert.equal(await page.getByRole('combobox', { name: 'Default model for the coder' }).inputValue(), '');
      assert.ok(await page.getByRole('radio', { name: /Ask for every step/ }).isChecked());
      assert.equal(await page.getByTestId('save-status').textContent(), 'No unsaved changes.');
      await screenshot(page, 'settings-light');

      // The New task form starts from these defaults, visibly.
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'New task' }).click();
      const newPlanner = page.getByRole('combobox', { name: 'Model for the planner' });
      await newPlanner.locator('option', { hasText: 'qwen2.5:7b (default)' }).waitFor({ state: 'attached' });
      await page.getByText('(default in Settings)').waitFor();
      assert.ok(await page.getByRole('radio', { name: /Ask for every step/ }).isChecked());
      assert.deepEqual(page.problems, []);
    });
  });

  it('shows who bundles are signed as and who is trusted, and stops trusting a signer for good', async () => {
    // One signer written into trusted_keys by hand (with a comment), one
    // trusted the way the import dialog does it.
    const ada = 'ab'.repeat(32);
    const bob = 'cd'.repeat(32);
    const group = (fp) => fp.match(/.{4}/g).join(' ');
    const file = path.join(stack.home, 'trusted_keys');
    const byHand = `# colleagues\n${group(ada)}  # ada's laptop\n`;
    await writeFile(file, byHand, { mode: 0o600 });
    assert.equal(await stack.call('TrustSigner', bob, '/home/bob/grid.ducklm'), true);
    const first = await stack.call('TrustedSigners');
    assert.match(first.own, /^([0-9a-f]{4} ){15}[0-9a-f]{4}$/);

    await journey(stack, 'settings-signers', async (page) => {
      await appReady(page);
      await go(stack, page, '#/settings');
      const section = page.getByRole('region', { name: 'Trusted signers' });
      assert.equal(await section.getByTestId('own-fingerprint').textContent(), first.own);
      const list = section.getByRole('list', { name: 'Trusted signers' });
      const entries = () => list.getByRole('listitem').evaluateAll((lis) => lis.map((li) => li.getAttribute('aria-label')));
      await list.waitFor();
      assert.deepEqual(await entries(), [group(ada), group(bob)]);
      await list.getByRole('listitem', { name: group(ada) }).getByText("ada's laptop").waitFor();
      await list.getByRole('listitem', { name: group(bob) }).getByText('trusted from the window for grid.ducklm').waitFor();

      const bobRow = list.getByRole('listitem', { name: group(bob) });
      await bobRow.getByRole('button', { name: 'Stop trusting…' }).click();
      await bobRow.getByRole('group', { name: 'Confirm stop trusting' }).waitFor();
      await screenshot(page, 'settings-signers-confirm');
      await bobRow.getByRole('button', { name: 'Stop trusting', exact: true }).click();
      await section.getByText(`${group(bob)} is no longer trusted: its bundles ask again before they import.`).waitFor();
      await bobRow.waitFor({ state: 'detached' });
      assert.deepEqual(await entries(), [group(ada)]);

      await page.reload();
      await list.waitFor();
      assert.deepEqual(await entries(), [group(ada)], 'gone after a reload too');
      await section.scrollIntoViewIfNeeded();
      assert.deepEqual(page.problems, []);
    });

    assert.equal(await readFile(file, 'utf8'), byHand, 'the hand-written lines stay byte for byte');
    const left = await stack.call('TrustedSigners');
    assert.deepEqual(
      left.signers.map((s) => s.fingerprint),
      [ada],
    );
    assert.equal(left.own, first.own);
  });

  it('switches to the dark theme, keeps it after a reload and shows it on every screen', async () => {
    // Something on every screen: a task run waiting for approval, a world with a fork.
    const run = await stack.call('SubmitTask', {
      task: 'show the kernel',
      plan: shellPlan('uname -a', 'show the kernel'),
      approvalMode: 'ask_every',
      models: {},
      workspace: '',
      timeoutSeconds: 30,
      maxSteps: 5,
    });
    await stack.waitFor('the run asks for approval', 'RunDetail', [run.id], (d) => d.approvals?.length > 0);
    const created = await stack.call('CreateWorld', { name: 'dark grid', program: '', example: 'branching_grid', seed: 7 });
    await stack.call('RunWorld', { runId: created.run.id, action: '', steps: 3, checkpointEvery: 0 });
    const cp = await stack.call('CheckpointWorld', created.run.id);
    await stack.call('Fork', {
      checkpointId: cp.id,
      parentRunId: created.run.id,
      divergence: 'state_patch',
      delta: '{"pos": [0, 4]}',
      seedPolicy: 'inherit',
      name: 'dark child',
      deliberationIndex: 0,
    });

    await journey(stack, 'settings-dark', async (page) => {
      // The first load settles before the hash changes: a hash change while
      // the app first mounts can be missed.
      await appReady(page);
      await go(stack, page, '#/settings');
      await page.getByTestId('ollama-reachable').waitFor();
      assert.equal(await theme(page), 'light', 'headless Chromium reports a light system');
      await page.getByRole('radiogroup', { name: 'Theme' }).getByText('Dark', { exact: true }).click();
      assert.equal(await theme(page), 'dark', 'the theme shows as soon as it is picked');
      const bg = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
      assert.equal(bg, 'rgb(22, 22, 20)', 'the dark palette applies');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Saved. ducklm now uses the Ollama at', { exact: false }).waitFor();
      assert.equal((await stack.call('GetSettings')).settings.theme, 'dark');

      await page.reload();
      await page.getByTestId('ollama-reachable').waitFor();
      assert.equal(await theme(page), 'dark', 'the saved theme applies at start');
      assert.ok(await page.getByRole('radio', { name: 'Dark' }).isChecked());

      // A fresh browser profile knows nothing of the last theme: the setting alone brings it.
      await page.evaluate(() => localStorage.clear());
      await page.reload();
      await page.waitForFunction(() => document.documentElement.getAttribute('data-theme') === 'dark');
      await page.getByTestId('ollama-reachable').waitFor();
      assert.deepEqual(page.problems, []);
    });

    // The other screens in dark, for a person to look at.
    const page = await stack.open();
    try {
      for (const [name, hash, ready] of [
        ['runs', '#/', (p) => p.getByTestId('approvals-badge').waitFor()],
        ['run', `#/runs/${encodeURIComponent(run.id)}`, (p) => p.getByRole('button', { name: /Approve/ }).first().waitFor()],
        ['new-task', '#/new', (p) => p.getByRole('button', { name: 'Start run' }).waitFor()],
        ['worlds', `#/worlds/${encodeURIComponent(created.run.id)}`, (p) => p.getByTestId('grid-view').waitFor()],
        ['lineage', '#/lineage', (p) => p.getByRole('group', { name: 'Lineage graph' }).waitFor()],
      ]) {
        await go(stack, page, hash);
        await ready(page);
        assert.equal(await theme(page), 'dark', `${name} is dark`);
        if (name === 'worlds') {
          // The grid's walls read as walls in the dark: at least 3:1 against the surface they lie on.
          const ratio = await page.evaluate(() => {
            const rgb = (c) => c.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number);
            const lum = ([r, g, b]) => {
              const f = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
              return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
            };
            const wall = lum(rgb(getComputedStyle(document.querySelector('.grid-wall')).fill));
            const bg = lum(rgb(getComputedStyle(document.querySelector('.grid-bg')).fill));
            const [hi, lo] = [wall, bg].sort((a, b) => b - a);
            return (hi + 0.05) / (lo + 0.05);
          });
          assert.ok(ratio >= 3, `the grid's walls stand out from the dark surface (${ratio.toFixed(2)}:1)`);
        }
        await screenshot(page, `dark-${name}`);
      }
      assert.deepEqual(page.problems, []);
    } finally {
      await page.close();
    }
  });

  it('says why an address where nothing answers does not work, and refuses a host that cannot be one', async () => {
    await journey(stack, 'settings-unreachable', async (page) => {
      // The first load settles before the hash changes: a hash change while
      // the app first mounts can be missed.
      await appReady(page);
      await go(stack, page, '#/settings');
      await page.getByTestId('ollama-reachable').waitFor();
      const host = page.getByRole('textbox', { name: 'Ollama host' });

      await host.fill('ftp://ollama.example');
      await page
        .getByTestId('host-problem')
        .getByText('"ftp://ollama.example" is not an Ollama host: Ollama speaks http or https, not ftp; type host:port, e.g. 127.0.0.1:11434')
        .waitFor();
      assert.ok(await page.getByRole('button', { name: 'Save' }).isDisabled());

      await host.fill('127.0.0.1:1');
      await page.getByTestId('host-problem').waitFor({ state: 'detached' });
      await page.getByRole('button', { name: 'Test connection' }).click();
      await page
        .getByTestId('ollama-unreachable')
        .getByText(
          'Ollama is not reachable at http://127.0.0.1:1 (connection refused); start it with `ollama serve`, or correct the Ollama host in Settings',
        )
        .waitFor();
      await page.getByTestId('models-free-text').waitFor();
      assert.equal(await page.getByRole('textbox', { name: 'Default model for the planner' }).inputValue(), 'qwen2.5:7b');

      // Saved, the dead host is in use at once; the fake one, saved again, is back at once.
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByTestId('save-status').getByText('now uses the Ollama at http://127.0.0.1:1', { exact: false }).waitFor();
      const dead = await stack.call('Models');
      assert.equal(dead.reachable, false);
      assert.equal(dead.host, 'http://127.0.0.1:1');
      await screenshot(page, 'settings-unreachable-saved');

      await host.fill('');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByTestId('save-status').getByText(`now uses the Ollama at ${stack.ollamaUrl}`, { exact: false }).waitFor();
      const back = await stack.call('Models');
      assert.equal(back.reachable, true, back.error);
      assert.deepEqual(back.models, FAKE_MODELS);
      await page.getByRole('button', { name: 'Test connection' }).click();
      await page.getByTestId('ollama-reachable').waitFor();
      assert.deepEqual(page.problems, []);
    });
  });
});
