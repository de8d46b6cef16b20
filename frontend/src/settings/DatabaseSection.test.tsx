// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DatabaseInput, DatabaseView } from '../bridge';
import { fakeApi } from '../test/fakeChannel';
import { DatabaseSection } from './DatabaseSection';

const SQLITE = '/home/ada/.local/share/ducklm/ducklm.db';
const TEAM = 'postgres://ada@db.example:5432/ducklm';
const PASSWORD = 'correct horse';

const local: DatabaseView = { address: '', passwordStored: false, inUse: SQLITE, shared: false, override: '', overrideAddress: '', nextStart: '', local: null, canRestart: false };

/** A backend whose team database takes PASSWORD; it keeps what is saved as the Go side does. */
function backend(start: DatabaseView = local) {
  let view = { ...start };
  let storedPassword = '';
  const fake = fakeApi({
    GetDatabase: () => view,
    TestDatabase: (i: DatabaseInput) => {
      if (i.address === '') return { ok: true, message: "An empty address is this machine's SQLite database", serverVersion: '', schemaVersion: 0, latestSchemaVersion: 5 };
      if (!i.address.startsWith('postgres://')) throw new Error(`"${i.address}" is not a PostgreSQL address: it starts with postgres://`);
      if ((i.password || storedPassword) !== PASSWORD)
        return { ok: false, message: `PostgreSQL at ${i.address} refused the password of user ada; check the password`, serverVersion: '15.8', schemaVersion: 0, latestSchemaVersion: 5 };
      return { ok: true, message: `Reachable: PostgreSQL 15.8 at ${i.address}, ducklm schema 5, this ducklm's.`, serverVersion: '15.8', schemaVersion: 5, latestSchemaVersion: 5 };
    },
    SaveDatabase: (i: DatabaseInput) => {
      if (i.address !== '' && !i.address.startsWith('postgres://')) throw new Error(`"${i.address}" is not a PostgreSQL address: it starts with postgres://`);
      if (i.password) storedPassword = i.password;
      if (i.address === '') storedPassword = '';
      view = { ...view, address: i.address, passwordStored: storedPassword !== '', nextStart: i.address === view.inUse ? '' : i.address || `the SQLite database` };
      return { database: view, message: `Saved. ducklm opens ${view.nextStart} at its next start; until then this window keeps ${view.inUse}.` };
    },
  });
  return fake;
}

afterEach(cleanup);

/** text is an element's text as a person reads it: runs of spaces as one. */
const text = (el: Element) => (el.textContent ?? '').replace(/\s+/g, ' ').trim();

describe('DatabaseSection', () => {
  it('comes into view with its address focused when asked for by its address, once', async () => {
    const scrolled = vi.fn();
    const was = Element.prototype.scrollIntoView;
    Element.prototype.scrollIntoView = scrolled;
    try {
      const { api } = backend();
      const { rerender } = render(<DatabaseSection api={api} inView />);
      await screen.findByTestId('database-in-use');
      await waitFor(() => expect(document.activeElement).toBe(screen.getByLabelText('Database address')));
      expect(scrolled).toHaveBeenCalledTimes(1);
      expect(scrolled.mock.contexts[0]).toBe(screen.getByRole('region', { name: 'Database' }));
      rerender(<DatabaseSection api={api} inView />);
      expect(scrolled, 'not again on a later render').toHaveBeenCalledTimes(1);
    } finally {
      Element.prototype.scrollIntoView = was;
    }
  });

  it('stays where the page is without being asked for', async () => {
    const scrolled = vi.fn();
    const was = Element.prototype.scrollIntoView;
    Element.prototype.scrollIntoView = scrolled;
    try {
      const { api } = backend();
      render(<DatabaseSection api={api} />);
      await screen.findByTestId('database-in-use');
      expect(scrolled).not.toHaveBeenCalled();
      expect(document.activeElement).not.toBe(screen.getByLabelText('Database address'));
    } finally {
      Element.prototype.scrollIntoView = was;
    }
  });

  it('shows the database in use, tests an address and answers with the sentence', async () => {
    const { api, channel } = backend();
    render(<DatabaseSection api={api} />);
    expect(text(await screen.findByTestId('database-in-use'))).toContain(SQLITE);
    screen.getByText('This machine (SQLite)');

    fireEvent.change(screen.getByLabelText('Database address'), { target: { value: TEAM } });
    fireEvent.change(screen.getByLabelText('Database password'), { target: { value: 'wrong' } });
    fireEvent.click(screen.getByRole('button', { name: 'Test the database connection' }));
    expect(text(await screen.findByTestId('database-unreachable'))).toContain(`✗ PostgreSQL at ${TEAM} refused the password of user ada; check the password.`);

    fireEvent.change(screen.getByLabelText('Database password'), { target: { value: PASSWORD } });
    fireEvent.keyDown(screen.getByLabelText('Database password'), { key: 'Enter' });
    expect(text(await screen.findByTestId('database-reachable'))).toContain(`✓ Reachable: PostgreSQL 15.8 at ${TEAM}, ducklm schema 5, this ducklm's.`);
    expect(channel.calls('TestDatabase')).toEqual([[{ address: TEAM, password: 'wrong' }], [{ address: TEAM, password: PASSWORD }]]);
    expect(channel.calls('SaveDatabase'), 'testing saves nothing').toEqual([]);
  });

  it('saves for the next start, clears the password field and never shows the password', async () => {
    const { api, channel } = backend();
    render(<DatabaseSection api={api} />);
    const save = await screen.findByRole('button', { name: 'Use at next start' });
    expect((save as HTMLButtonElement).disabled).toBe(true);
    fireEvent.change(screen.getByLabelText('Database address'), { target: { value: ` ${TEAM} ` } });
    fireEvent.change(screen.getByLabelText('Database password'), { target: { value: PASSWORD } });
    fireEvent.click(save);
    expect(text(await screen.findByTestId('database-saved'))).toContain(`✓ Saved. ducklm opens ${TEAM} at its next start; until then this window keeps ${SQLITE}.`);
    expect(channel.calls('SaveDatabase')).toEqual([[{ address: TEAM, password: PASSWORD }]]);
    const pw = screen.getByLabelText('Database password');
    await waitFor(() => expect(pw.getAttribute('placeholder')).toBe('stored; leave empty to keep it'));
    expect((pw as HTMLInputElement).value).toBe('');
    expect(pw.getAttribute('type')).toBe('password');
    expect(document.body.textContent).not.toContain(PASSWORD);

    // With the password left empty, the stored one is used.
    fireEvent.click(screen.getByRole('button', { name: 'Test the database connection' }));
    await screen.findByTestId('database-reachable');
  });

  it('says a refused address and what the next start opens', async () => {
    const { api } = backend({ ...local, address: TEAM, passwordStored: true, nextStart: TEAM });
    render(<DatabaseSection api={api} />);
    expect(text(await screen.findByTestId('database-next-start'))).toContain(`At the next start ducklm opens ${TEAM}.`);
    expect((screen.getByLabelText('Database address') as HTMLInputElement).value).toBe(TEAM);
    fireEvent.change(screen.getByLabelText('Database address'), { target: { value: 'mysql://db/x' } });
    fireEvent.click(screen.getByRole('button', { name: 'Use at next start' }));
    expect(text(await screen.findByTestId('database-save-failed'))).toContain('Not saved: "mysql://db/x" is not a PostgreSQL address: it starts with postgres://.');
  });

  it('says when DUCKLM_DATABASE_URL wins over the field', async () => {
    const { api } = backend({ ...local, inUse: TEAM, shared: true, override: 'DUCKLM_DATABASE_URL', overrideAddress: TEAM });
    render(<DatabaseSection api={api} />);
    expect(text(await screen.findByTestId('database-override'))).toContain(
      `DUCKLM_DATABASE_URL (or --database-url) chooses the database: ${TEAM}. It wins over this field; what you save here applies once it is unset.`,
    );
    screen.getByText('Shared (PostgreSQL)');
  });

  it('says when the setting cannot be read, and tries again', async () => {
    const { api, channel } = backend();
    channel.handle('GetDatabase', () => {
      throw new Error('cannot read the database setting in /d');
    });
    render(<DatabaseSection api={api} />);
    expect(text(await screen.findByRole('alert'))).toContain('The database setting could not be read: cannot read the database setting in /d.');
    channel.handle('GetDatabase', () => local);
    fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(text(await screen.findByTestId('database-in-use'))).toContain(SQLITE);
  });
});
