// @vitest-environment jsdom
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { App, versionLabel } from './App';
import { polyfillLayout } from './test/dom';
import { fakeApi } from './test/fakeChannel';
import { approval, checks, event, lineage, overview, runSummary } from './test/fixtures';

beforeAll(polyfillLayout);
afterEach(() => {
  cleanup();
  window.location.hash = '';
  vi.unstubAllGlobals();
});

function setup(approvals: () => unknown = () => [approval()]) {
  return fakeApi({
    Overview: () => overview(),
    Checks: () => checks(),
    Runs: () => [runSummary({ approvals: 1, run: { ...runSummary().run, status: 'awaiting_approval' } })],
    Models: () => ({ host: 'http://127.0.0.1:11434', reachable: false, error: 'Ollama is not running at http://127.0.0.1:11434', models: null, sandboxed: false }),
    Approvals: approvals,
    Lineage: () => lineage(),
    WorldExamples: () => [],
    ToolCatalog: () => [],
  });
}

describe('App', () => {
  it('has a sidebar with named, stable nav items', async () => {
    const { api } = setup();
    render(<App api={api} />);
    const nav = screen.getByRole('navigation', { name: 'Sections' });
    const links = within(nav).getAllByRole('link');
    expect(links.map((l) => [l.getAttribute('aria-label'), l.getAttribute('data-nav')])).toEqual([
      ['Runs', 'home'],
      ['New task', 'new'],
      ['Worlds', 'worlds'],
      ['Lineage', 'lineage'],
      ['Memory', 'memory'],
      ['Workers', 'workers'],
      ['Settings', 'settings'],
    ]);
    expect(within(nav).getByRole('link', { name: 'Runs' }).getAttribute('aria-current')).toBe('page');
    await screen.findByText('/home/ada/.local/share/ducklm');
    expect(await screen.findByText('v0.3.1')).toBeTruthy();
  });

  it('labels a release with v and a build of a commit as it is', () => {
    expect(versionLabel('0.3.1')).toBe('v0.3.1');
    expect(versionLabel('v0.3.1')).toBe('v0.3.1');
    expect(versionLabel('8b2378c')).toBe('8b2378c');
    expect(versionLabel('e0a51c2-dirty')).toBe('e0a51c2-dirty');
    expect(versionLabel('0.4.0-3-g8b2378c')).toBe('v0.4.0-3-g8b2378c');
    expect(versionLabel('dev')).toBe('dev');
  });

  it('shows the approvals badge and follows the ledger', async () => {
    let list = [approval()];
    const { api, channel } = setup(() => list);
    render(<App api={api} />);
    expect((await screen.findByTestId('approvals-badge')).textContent).toBe('1');
    expect(screen.getByRole('status').textContent).toBe('1 approval waiting');
    list = [];
    channel.emit('ledger:events', [event({ seq: 9, pos: 50, type: 'step.approved' })]);
    await waitFor(() => expect(screen.queryByTestId('approvals-badge')).toBeNull());
  });

  it('raises a desktop notification for a new request when allowed', async () => {
    const made: { title: string; body?: string | undefined }[] = [];
    class FakeNotification {
      static permission = 'granted';
      static requestPermission = vi.fn(async () => 'granted');
      onclick: (() => void) | null = null;
      constructor(title: string, opts?: NotificationOptions) {
        made.push({ title, body: opts?.body });
      }
    }
    vi.stubGlobal('Notification', FakeNotification);
    let list = [approval()];
    const { api, channel } = setup(() => list);
    render(<App api={api} />);
    await screen.findByTestId('approvals-badge');
    expect(made).toHaveLength(0); // what was waiting at start is not news
    list = [approval(), approval({ requestId: 'apr_new', title: 'Write the report', tool: 'file_write', risk: 'medium', why: 'it writes a file' })];
    channel.emit('ledger:events', [event({ seq: 9, pos: 50, type: 'step.approval_requested' })]);
    await waitFor(() => expect(made).toEqual([{ title: 'ducklm: approval needed (medium risk)', body: 'Write the report: file_write, it writes a file' }]));
  });

  it('opens what `ducklm open` asked for, at start and later', async () => {
    const { api, channel } = setup();
    channel.handle('TakeOpen', () => ({ route: { screen: 'settings' } }));
    render(<App api={api} />);
    await waitFor(() => expect(window.location.hash).toBe('#/settings'));
    expect(channel.calls('TakeOpen')).toHaveLength(1);

    channel.emit('app:navigate', { route: { screen: 'lineage', select: 'wld_7' } });
    await waitFor(() => expect(window.location.hash).toBe('#/lineage?select=wld_7'));

    channel.emit('app:navigate', { route: { screen: 'home' }, error: 'There is no run run_404.' });
    expect((await screen.findByRole('alert')).textContent).toContain('There is no run run_404.');
    await waitFor(() => expect(window.location.hash).toBe('#/'));
    fireEvent.click(screen.getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByText('There is no run run_404.')).toBeNull();
  });

  it('navigates by the hash when a nav item is clicked', async () => {
    const { api } = setup();
    render(<App api={api} />);
    await screen.findByText('/home/ada/.local/share/ducklm');
    act(() => {
      window.location.hash = within(screen.getByRole('navigation')).getByRole('link', { name: 'Worlds' }).getAttribute('href')!;
      window.dispatchEvent(new HashChangeEvent('hashchange'));
    });
    // While the Worlds screen's code arrives, Runs stays, faded and inert.
    const main = screen.getByRole('main');
    expect(main.getAttribute('aria-busy')).toBe('true');
    expect(main.hasAttribute('inert')).toBe(true);
    expect(screen.getByText('/home/ada/.local/share/ducklm')).toBeTruthy();
    expect(await screen.findByRole('heading', { name: 'Worlds', level: 1 })).toBeTruthy();
    expect(main.getAttribute('aria-busy')).toBeNull();
    expect(main.hasAttribute('inert')).toBe(false);
    expect(screen.getByRole('link', { name: 'Worlds' }).getAttribute('aria-current')).toBe('page');
  });

  it('shows Ollama and sandbox problems on Home, each with its fix', async () => {
    const { api } = setup();
    render(<App api={api} />);
    const ollama = await screen.findByTestId('ollama-status');
    expect(within(ollama).getByText(/Ollama is not running at http:\/\/127.0.0.1:11434/)).toBeTruthy();
    expect(within(ollama).getByText(/ollama serve/)).toBeTruthy();
    const sandbox = screen.getByTestId('sandbox-status');
    expect(within(sandbox).getByText('No sandbox: every shell step waits for your approval.')).toBeTruthy();
    expect(within(sandbox).getByText(/install bubblewrap/)).toBeTruthy();
    const run = await screen.findByTestId('run-row');
    expect(within(run).getByText('1 approval')).toBeTruthy();
    fireEvent.click(within(run).getByRole('link', { name: 'Clean the build folder' }));
  });
});
