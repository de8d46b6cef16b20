// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { BundleCounts, BundleReport, DatabaseView, LocalCopy } from '../bridge';
import { fakeApi } from '../test/fakeChannel';
import { TeamLocalData } from '../home/TeamLocalData';
import { DatabaseSection } from './DatabaseSection';
import { LocalDataPanel, RESTART_IN_BROWSER } from './LocalData';

const SQLITE = '/home/ada/.local/share/ducklm/ducklm.db';
const TEAM = 'postgres://ada@db.example:5432/ducklm';

const zero: BundleCounts = { worlds: 0, runs: 0, forks: 0, checkpoints: 0, streams: 0, events: 0, blobs: 0 };
const team: DatabaseView = {
  address: TEAM,
  passwordStored: true,
  inUse: TEAM,
  shared: true,
  override: '',
  overrideAddress: '',
  nextStart: '',
  canRestart: false,
  local: { path: SQLITE, exists: true, taskRuns: 1, simulatedWorlds: 2, roots: 2, unfinished: 1, problem: '' },
};

const report: BundleReport = {
  file: '/tmp/x.ducklm',
  bytes: 10,
  ok: true,
  checks: { manifest: true, signature: true, entries: true, references: true },
  formatVersion: 1,
  appVersion: 'dev',
  roots: ['world_a'],
  scope: { ancestry: false, descendants: true },
  entries: 3,
  signed: true,
  signer: 'ab'.repeat(32),
  trusted: true,
  trust: 'own',
  counts: { ...zero, worlds: 2, runs: 2, forks: 1 },
  worlds: [],
};

const copied: LocalCopy = {
  message: `Copied 1 of 2 lineages from ${SQLITE} (left as it was); the others say why below. Added here: 2 worlds, 2 runs, 1 fork.`,
  added: { ...zero, worlds: 2, runs: 2, forks: 1 },
  lineages: [
    {
      root: 'world_a',
      name: 'Branching Grid',
      domain: 'simulated',
      problem: '',
      import: { report, imported: true, added: { ...zero, worlds: 2, runs: 2, forks: 1 }, updated: 0, alreadyPresent: false, addedIds: ['world_a'] },
    },
    {
      root: 'world_b',
      name: 'list the workspace',
      domain: 'real',
      problem: 'Not copied: this task run is still awaiting approval, and only finished runs are copied.',
      import: { report, imported: false, added: zero, updated: 0, alreadyPresent: false, addedIds: [] },
    },
  ],
};

afterEach(cleanup);

const text = (el: Element) => (el.textContent ?? '').replace(/\s+/g, ' ').trim();

describe('LocalDataPanel', () => {
  it('says where the local data is, that it is untouched and what it holds', () => {
    const { api } = fakeApi();
    render(<LocalDataPanel api={api} view={team} />);
    const panel = screen.getByRole('region', { name: "This machine's data" });
    expect(text(panel)).toContain(`ducklm now uses the team database ${TEAM}. What you did before is still on this machine, in ${SQLITE}, untouched`);
    expect(text(screen.getByTestId('local-data-holds'))).toBe(
      'It holds 1 task run and 2 simulated worlds. 1 of its task runs has not finished (waiting for an approval, or paused): a run is copied once it has finished on this machine\'s database.',
    );
  });

  it('copies through the import path and shows each lineage with its report', async () => {
    const { api, channel } = fakeApi({ CopyLocalToTeam: () => copied });
    render(<LocalDataPanel api={api} view={team} />);
    fireEvent.click(screen.getByRole('button', { name: 'Copy my local runs and worlds to the team database' }));
    const out = await screen.findByTestId('local-copy');
    expect(channel.calls('CopyLocalToTeam')).toHaveLength(1);
    expect(text(out)).toContain(copied.message);
    const grid = out.querySelector('[data-root="world_a"]')!;
    expect(text(grid)).toContain('Imported: added 2 worlds');
    expect(within(grid as HTMLElement).getByText('Import report')).toBeTruthy();
    expect(text(out.querySelector('[data-root="world_b"]')!)).toContain('Not copied: this task run is still awaiting approval');
  });

  it('switches back for the next start and, in a browser, says how to restart', async () => {
    const saved = { database: { ...team, address: '', passwordStored: false, nextStart: `this machine's SQLite database in /home/ada/.local/share/ducklm` }, message: 'Saved. ducklm opens this machine\'s SQLite database at its next start.' };
    const { api, channel } = fakeApi({ SaveDatabase: () => saved });
    render(<LocalDataPanel api={api} view={team} />);
    fireEvent.click(screen.getByRole('button', { name: 'Switch back to the local database' }));
    expect(text(await screen.findByTestId('local-data-switched'))).toContain("Saved. ducklm opens this machine's SQLite database at its next start.");
    expect(channel.calls('SaveDatabase')).toEqual([[{ address: '', password: '' }]]);
    expect(screen.getByTestId('restart-in-browser').textContent).toBe(RESTART_IN_BROWSER);
    expect(screen.queryByRole('button', { name: 'Restart now' })).toBeNull();
  });

  it('restarts the desktop window with Restart now, and says why when it cannot', async () => {
    const saved = { database: { ...team, address: '', nextStart: 'the SQLite database', canRestart: true }, message: 'Saved.' };
    const { api, channel } = fakeApi({
      SaveDatabase: () => saved,
      RestartApp: () => {
        throw new Error('ducklm could not restart (no executable); quit it and start it again');
      },
    });
    render(<LocalDataPanel api={api} view={{ ...team, canRestart: true }} />);
    fireEvent.click(screen.getByRole('button', { name: 'Switch back to the local database' }));
    fireEvent.click(await screen.findByRole('button', { name: 'Restart now' }));
    expect(text(await screen.findByRole('alert'))).toBe('ducklm could not restart (no executable); quit it and start it again.');
    expect(channel.calls('RestartApp')).toHaveLength(1);
  });

  it('offers no copy of a local database it cannot read, and says why', () => {
    const { api } = fakeApi();
    const view = { ...team, local: { ...team.local!, problem: `${SQLITE} holds ducklm schema 3, older than this ducklm's 5` } };
    render(<LocalDataPanel api={api} view={view} />);
    expect(screen.queryByRole('button', { name: /Copy my local runs/ })).toBeNull();
    expect(text(screen.getByRole('alert'))).toContain('It cannot be read, so it cannot be copied');
  });
});

describe('TeamLocalData on Home', () => {
  it('shows the panel on a team database with local data, and nothing on the local database', async () => {
    const { api } = fakeApi({ GetDatabase: () => team });
    render(<TeamLocalData api={api} />);
    await screen.findByRole('region', { name: "This machine's data" });
    cleanup();
    const { api: onLocal } = fakeApi({ GetDatabase: () => ({ ...team, shared: false, inUse: SQLITE, local: null }) });
    const { container } = render(<TeamLocalData api={onLocal} />);
    await new Promise((r) => setTimeout(r, 20));
    expect(container.textContent).toBe('');
  });
});

describe('DatabaseSection after the switch', () => {
  it('holds the local data panel and offers the restart once a change is saved', async () => {
    const { api } = fakeApi({ GetDatabase: () => ({ ...team, nextStart: "this machine's SQLite database" }) });
    render(<DatabaseSection api={api} />);
    await screen.findByRole('region', { name: "This machine's data" });
    expect(screen.getByTestId('restart-in-browser').textContent).toBe(RESTART_IN_BROWSER);
  });
});
