// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EVENT_PROGRESS } from '../bridge';
import type { BundleCounts, BundleReport, ExportInput, ImportInput, ImportResult } from '../bridge/types';
import { fakeApi } from '../test/fakeChannel';
import { ExportButton, ImportButton } from './BundleButtons';
import { BundleReportView, reportSteps } from './BundleReport';
import { ExportDialog } from './ExportDialog';
import { ImportDialog } from './ImportDialog';
import { countsText, formatFingerprint, progressText, scopeOptions, worldRoute } from './bundle';

afterEach(cleanup);

const SIGNER = '3f1a9c0e'.repeat(8);
const ZERO: BundleCounts = { worlds: 0, runs: 0, forks: 0, checkpoints: 0, streams: 0, events: 0, blobs: 0 };
const COUNTS: BundleCounts = { worlds: 2, runs: 2, forks: 1, checkpoints: 4, streams: 2, events: 37, blobs: 5 };
const PARENT = 'wld_0190f0e3c2a47b3d9e8f001122330001';
const CHILD = 'wld_0190f0e3c2a47b3d9e8f001122330002';

function report(over: Partial<BundleReport> = {}): BundleReport {
  return {
    file: '/home/ada/Documents/grid.ducklm',
    bytes: 18_432,
    ok: true,
    checks: { manifest: true, signature: true, entries: true, references: true },
    formatVersion: 1,
    appVersion: '0.4.0',
    createdAt: '2025-03-12T14:03:22Z',
    roots: [PARENT],
    scope: { ancestry: false, descendants: true },
    entries: 11,
    signed: true,
    signer: SIGNER,
    trusted: false,
    trust: 'unknown signer',
    counts: COUNTS,
    worlds: [
      { id: PARENT, name: 'grid', domain: 'simulated', runs: [{ id: 'run_0190f0e3c2a47b3d9e8f00112233aaaa', status: 'running', events: 30 }] },
      {
        id: CHILD,
        name: 'grid / seed_change',
        domain: 'simulated',
        parentWorldId: PARENT,
        runs: [{ id: 'run_0190f0e3c2a47b3d9e8f00112233bbbb', status: 'running', events: 7 }],
      },
    ],
    ...over,
  };
}

const BROKEN = report({
  ok: false,
  problem: 'this is not a ducklm bundle (format "")',
  checks: { manifest: false, signature: false, entries: false, references: false },
  formatVersion: 0,
  appVersion: '',
  roots: [],
  signed: false,
  signer: '',
  trust: 'unsigned',
  counts: ZERO,
  worlds: [],
});

describe('bundle words', () => {
  it('offers a forked root only the scopes that carry its ancestry', () => {
    const plain = scopeOptions('world', false);
    expect(plain.map((o) => [o.id, o.unavailable === undefined])).toEqual([
      ['alone', true],
      ['ancestry', false],
      ['descendants', true],
    ]);
    const forked = scopeOptions('run', true);
    expect(forked.map((o) => [o.id, o.unavailable === undefined])).toEqual([
      ['alone', false],
      ['ancestry', true],
      ['all', true],
    ]);
    expect(forked[0]!.unavailable).toContain('comes from a fork');
    expect(forked[2]!.includes).toContain('every world forked from it');
  });

  it('says counts, fingerprints and progress in words', () => {
    expect(countsText(COUNTS)).toBe('2 worlds, 2 runs, 1 fork, 4 checkpoints, 37 events, 5 blobs');
    expect(formatFingerprint('0123456789abcdef')).toBe('0123 4567 89ab cdef');
    expect(progressText({ op: 'x', phase: 'verify', done: 1 << 20, total: 4 << 20, unit: 'bytes' })).toBe('Checking every entry: 1 MiB of 4 MiB (25%)');
    expect(progressText({ op: 'x', phase: 'write', done: 0, total: 0, unit: 'bytes' })).toBe('Writing into this installation…');
  });

  it('opens a task world on its run and a simulated one on its latest run', () => {
    const w = report().worlds[1]!;
    expect(worldRoute(w)).toEqual({ screen: 'world', runId: 'run_0190f0e3c2a47b3d9e8f00112233bbbb' });
    expect(worldRoute({ ...w, domain: 'real' })).toEqual({ screen: 'run', runId: 'run_0190f0e3c2a47b3d9e8f00112233bbbb' });
    expect(worldRoute({ ...w, runs: [] })).toEqual({ screen: 'lineage', select: CHILD });
  });
});

describe('BundleReportView', () => {
  it('marks the failed check and the ones never tried', () => {
    const steps = reportSteps(report({ ok: false, problem: 'entry specs.jsonl does not match its sha256', checks: { manifest: true, signature: true, entries: false, references: false } }));
    expect(steps.map((s) => [s.name, s.mark])).toEqual([
      ['Manifest', 'ok'],
      ['Signature', 'ok'],
      ['Signer', 'warn'],
      ['Digests', 'fail'],
      ['References', 'skip'],
    ]);
    expect(steps[3]!.detail).toBe('Entry specs.jsonl does not match its sha256.');
  });

  it('says an unknown signer needs judgement and shows its fingerprint', () => {
    const { container } = render(<BundleReportView report={report()} />);
    // Intact, but not a green light: the signer is unknown.
    expect(screen.getByRole('status').textContent).toBe('This bundle is intact, but its signer is not one this installation trusts: importing it is your choice.');
    expect(screen.getByRole('status').className).toBe('inline-warn');
    const signer = container.querySelector('[data-check="Signer"]')!;
    expect(signer.className).toContain('check-warn');
    expect(signer.textContent).toContain('Not a key this installation trusts');
    expect(signer.textContent).toContain(formatFingerprint(SIGNER));
    expect(container.querySelector('[data-check="Digests"]')!.textContent).toContain('All 11 entries');
    expect(screen.getByText('2 worlds, 2 runs, 1 fork, 4 checkpoints, 37 events, 5 blobs')).toBeTruthy();
    expect(screen.queryAllByRole('link')).toHaveLength(0);
  });
});

describe('ExportDialog', () => {
  function setup(native: boolean, exportBundle: (input: ExportInput) => unknown) {
    return fakeApi({
      NativeDialogs: () => native,
      SuggestBundlePath: (name: string) => `/home/ada/Documents/${name}.ducklm`,
      ChooseBundleToSave: () => '/home/ada/Desktop/picked.ducklm',
      ExportBundle: exportBundle,
      VerifyBundle: () => ({ ...report(), trusted: true, trust: "this installation's own key" }),
    });
  }

  it('in a browser, says the path is on this machine, exports with progress and shows the result', async () => {
    let finish: (v: unknown) => void = () => undefined;
    const exportBundle = vi.fn((_input: ExportInput) => new Promise((resolve) => (finish = resolve)));
    const { api, channel } = setup(false, exportBundle);
    render(<ExportDialog api={api} root={CHILD} kind="world" name="grid" forked onClose={() => undefined} />);

    expect(await screen.findByText(/has no file dialog for this machine/)).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Browse…' })).toBeNull();
    const path = screen.getByRole('textbox', { name: 'Bundle file' }) as HTMLInputElement;
    await waitFor(() => expect(path.value).toBe('/home/ada/Documents/grid.ducklm'));
    const alone = screen.getByRole('radio', { name: /This world alone/ }) as HTMLInputElement;
    expect(alone.disabled).toBe(true);
    expect((screen.getByRole('radio', { name: /^With its ancestry(?! and)/ }) as HTMLInputElement).checked).toBe(true);
    fireEvent.click(screen.getByRole('radio', { name: /With its ancestry and descendants/ }));

    fireEvent.click(screen.getByRole('button', { name: 'Export' }));
    await waitFor(() => expect(exportBundle).toHaveBeenCalledOnce());
    const input = exportBundle.mock.calls[0]![0];
    expect(input).toMatchObject({ root: CHILD, scope: 'all', path: '/home/ada/Documents/grid.ducklm', replace: false });
    expect(input.op).not.toBe('');
    channel.emit(EVENT_PROGRESS, [{ op: 'someone-else', phase: 'export', done: 9, total: 10, unit: 'bytes' }]);
    channel.emit(EVENT_PROGRESS, [{ op: input.op, phase: 'export', done: 2048, total: 8192, unit: 'bytes' }]);
    expect(await screen.findByText('Writing the bundle: 2 KiB of 8 KiB (25%)')).toBeTruthy();

    finish({ file: '/home/ada/Documents/grid.ducklm', bytes: 18_432, signer: SIGNER, root: CHILD, scope: 'all', counts: COUNTS });
    expect(await screen.findByText('Exported to a signed bundle.')).toBeTruthy();
    expect(screen.getByTestId('export-file').textContent).toBe('/home/ada/Documents/grid.ducklm');
    expect(screen.getByText('18 KiB')).toBeTruthy();
    expect(screen.getByText(formatFingerprint(SIGNER))).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: 'Verify' }));
    expect(await screen.findByText('This bundle checks out.')).toBeTruthy();
    expect(channel.calls('VerifyBundle')[0]![0]).toBe('/home/ada/Documents/grid.ducklm');
  });

  it('keeps the form and shows the sentence when the export fails', async () => {
    const { api } = setup(false, () => {
      throw new Error('/home/ada/Documents/grid.ducklm already exists; choose another name, or replace it');
    });
    render(<ExportDialog api={api} root={PARENT} kind="world" name="grid" forked={false} onClose={() => undefined} />);
    const path = screen.getByRole('textbox', { name: 'Bundle file' }) as HTMLInputElement;
    await waitFor(() => expect(path.value).not.toBe(''));
    fireEvent.click(screen.getByRole('button', { name: 'Export' }));
    expect((await screen.findByRole('alert')).textContent).toContain('already exists');
    expect(screen.getByRole('button', { name: 'Export' })).toBeTruthy();
  });

  it('in the desktop window, Browse… takes the path from the save dialog', async () => {
    const exportBundle = vi.fn((_input: ExportInput) => ({ file: '/home/ada/Desktop/picked.ducklm', bytes: 1, signer: SIGNER, root: PARENT, scope: 'alone', counts: COUNTS }));
    const { api, channel } = setup(true, exportBundle);
    render(<ExportButton api={api} root="run_0190f0e3c2a47b3d9e8f00112233aaaa" kind="run" name="list files" forked={false} />);
    fireEvent.click(screen.getByRole('button', { name: 'Export…' }));
    fireEvent.click(await screen.findByRole('button', { name: 'Browse…' }));
    const path = screen.getByRole('textbox', { name: 'Bundle file' }) as HTMLInputElement;
    await waitFor(() => expect(path.value).toBe('/home/ada/Desktop/picked.ducklm'));
    expect(channel.calls('ChooseBundleToSave')[0]).toEqual(['Export list files', 'list files']);
    expect(screen.queryByText(/has no file dialog/)).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Export' }));
    await waitFor(() => expect(exportBundle).toHaveBeenCalledOnce());
    expect(exportBundle.mock.calls[0]![0]).toMatchObject({ scope: 'alone', path: '/home/ada/Desktop/picked.ducklm', replace: true });
  });

  it('is disabled with its reason when the run cannot travel yet', () => {
    const { api } = setup(true, () => null);
    render(<ExportButton api={api} root="run_1" kind="run" name="x" forked={false} unavailable="A task run can be exported once it has finished." />);
    const b = screen.getByRole('button', { name: 'Export…' }) as HTMLButtonElement;
    expect(b.disabled).toBe(true);
    expect(b.title).toBe('A task run can be exported once it has finished.');
  });
});

describe('ImportDialog', () => {
  it('opens its dialog under the page, leaving the row its button sits in as it was', async () => {
    const { api } = fakeApi({ NativeDialogs: () => false });
    const { container } = render(
      <header className="panel-head" data-testid="row">
        <h2>Runs</h2>
        <ImportButton api={api} />
        <ExportButton api={api} root="run_1" kind="run" name="x" forked={false} />
      </header>,
    );
    const row = container.querySelector('[data-testid="row"]')!;
    const before = row.children.length;
    for (const name of ['Import bundle…', 'Export…']) {
      fireEvent.click(screen.getByRole('button', { name }));
      const dialog = await screen.findByRole('dialog');
      // A dialog inside the row is one of its flex items' neighbours and moved the button aside.
      expect(row.contains(dialog)).toBe(false);
      expect(row.children.length).toBe(before);
      fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
      await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    }
  });

  function imported(over: Partial<ImportResult> = {}): ImportResult {
    return { report: report(), imported: true, added: COUNTS, updated: 0, alreadyPresent: false, addedIds: [PARENT, CHILD], ...over };
  }

  it('verifies first, lets the user decide about an unknown signer, imports and links to what arrived', async () => {
    const importBundle = vi.fn((input: ImportInput) => {
      expect(input.allowUnsigned).toBe(true);
      return imported();
    });
    const onImported = vi.fn();
    const { api, channel } = fakeApi({ NativeDialogs: () => false, VerifyBundle: () => report(), ImportBundle: importBundle });
    render(<ImportDialog api={api} onClose={() => undefined} onImported={onImported} />);

    fireEvent.change(screen.getByRole('textbox', { name: 'Bundle file (.ducklm)' }), { target: { value: '~/Documents/grid.ducklm' } });
    fireEvent.click(screen.getByRole('button', { name: 'Check bundle' }));
    expect(await screen.findByText(/^This bundle is intact, but its signer is not one this installation trusts/)).toBeTruthy();
    expect(screen.queryByText('This bundle checks out.')).toBeNull();
    expect(channel.calls('VerifyBundle')[0]![0]).toBe('~/Documents/grid.ducklm');
    expect(importBundle).not.toHaveBeenCalled();

    const importButton = screen.getByRole('button', { name: 'Import' }) as HTMLButtonElement;
    expect(importButton.disabled).toBe(true);
    const decision = screen.getByRole('group', { name: 'Your decision' });
    expect(decision.textContent).toContain('not a key this installation trusts');
    // The choice that enables Import sits beside it, in the dialog's footer (never below the fold).
    const footer = importButton.closest('footer')!;
    const anyway = within(footer).getByRole('checkbox', { name: 'I trust where this file came from: import it anyway' });
    expect(footer.contains(anyway)).toBe(true);
    fireEvent.click(anyway);
    expect(importButton.disabled).toBe(false);
    fireEvent.click(importButton);

    expect(await screen.findByText('Imported: added 2 worlds, 2 runs, 1 fork, 4 checkpoints, 37 events, 5 blobs.')).toBeTruthy();
    const open = screen.getByRole('link', { name: 'grid / seed_change' });
    expect(open.getAttribute('href')).toBe('#/worlds/run_0190f0e3c2a47b3d9e8f00112233bbbb');
    expect(screen.getAllByRole('link', { name: 'Lineage' })[0]!.getAttribute('href')).toBe(`#/lineage?select=${PARENT}`);
    expect(screen.getAllByText('new here')).toHaveLength(2);
    expect(onImported).toHaveBeenCalledOnce();
    expect(importBundle.mock.calls[0]![0].path).toBe('/home/ada/Documents/grid.ducklm');
  });

  it('trusts the signer from now on when asked, checks again and imports without the override', async () => {
    let trusted = false;
    const trustSigner = vi.fn(() => {
      trusted = true;
      return true;
    });
    const importBundle = vi.fn((input: ImportInput) => {
      expect(input.allowUnsigned).toBe(false);
      return imported();
    });
    const { api, channel } = fakeApi({
      NativeDialogs: () => false,
      VerifyBundle: () => (trusted ? report({ trusted: true, trust: 'listed in trusted_keys' }) : report()),
      TrustSigner: trustSigner,
      ImportBundle: importBundle,
    });
    render(<ImportDialog api={api} onClose={() => undefined} />);
    fireEvent.change(screen.getByRole('textbox', { name: 'Bundle file (.ducklm)' }), { target: { value: '/tmp/grid.ducklm' } });
    fireEvent.click(screen.getByRole('button', { name: 'Check bundle' }));
    const decision = await screen.findByRole('group', { name: 'Your decision' });
    fireEvent.click(within(decision).getByRole('button', { name: 'Trust this signer from now on' }));

    await waitFor(() => expect(screen.queryByRole('group', { name: 'Your decision' })).toBeNull());
    expect(trustSigner).toHaveBeenCalledWith(SIGNER, '/home/ada/Documents/grid.ducklm');
    expect(channel.calls('VerifyBundle')).toHaveLength(2);
    const importButton = screen.getByRole('button', { name: 'Import' }) as HTMLButtonElement;
    expect(importButton.disabled).toBe(false);
    fireEvent.click(importButton);
    await screen.findByText(/^Imported: added/);
  });

  it('refuses a broken file with its sentence and never imports it', async () => {
    const importBundle = vi.fn();
    const { api } = fakeApi({ NativeDialogs: () => true, ChooseBundleToOpen: () => '/tmp/broken.ducklm', VerifyBundle: () => ({ ...BROKEN, file: '/tmp/broken.ducklm' }), ImportBundle: importBundle });
    const { container } = render(<ImportButton api={api} />);
    fireEvent.click(screen.getByRole('button', { name: 'Import bundle…' }));
    fireEvent.click(await screen.findByRole('button', { name: 'Browse…' }));
    expect((await screen.findByText(/This bundle cannot be imported/)).textContent).toBe('This bundle cannot be imported: it failed the manifest check.');
    expect(container.ownerDocument.querySelector('[data-check="Manifest"]')!.textContent).toContain('This is not a ducklm bundle (format "").');
    expect(screen.getByText(/Nothing was written/)).toBeTruthy();
    expect(container.ownerDocument.querySelector('[data-check="Manifest"]')!.className).toContain('check-fail');
    expect(container.ownerDocument.querySelector('[data-check="References"]')!.className).toContain('check-skip');
    expect((screen.getByRole('button', { name: 'Import' }) as HTMLButtonElement).disabled).toBe(true);
    expect(importBundle).not.toHaveBeenCalled();
  });

  it('says when the file cannot be read, and when everything was here already', async () => {
    const { api, channel } = fakeApi({
      NativeDialogs: () => false,
      VerifyBundle: () => {
        throw new Error('there is no file /tmp/nope.ducklm');
      },
    });
    render(<ImportDialog api={api} onClose={() => undefined} />);
    fireEvent.change(screen.getByRole('textbox', { name: 'Bundle file (.ducklm)' }), { target: { value: '/tmp/nope.ducklm' } });
    fireEvent.click(screen.getByRole('button', { name: 'Check bundle' }));
    expect((await screen.findByRole('alert')).textContent).toBe('there is no file /tmp/nope.ducklm');

    channel.handle('VerifyBundle', () => report({ trusted: true, trust: 'listed in trusted_keys' }));
    channel.handle('ImportBundle', () => imported({ alreadyPresent: true, added: ZERO, addedIds: [], report: report({ trusted: true }) }));
    fireEvent.click(screen.getByRole('button', { name: 'Check bundle' }));
    fireEvent.click(await screen.findByRole('button', { name: 'Import' }));
    expect((await screen.findByText(/Already here/)).textContent).toContain('nothing changed');
    expect(screen.getAllByText('was here already')).toHaveLength(2);
  });
});
