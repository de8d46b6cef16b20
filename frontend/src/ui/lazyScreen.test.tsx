// @vitest-environment jsdom
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { Suspense, startTransition, useState } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { lazyScreen } from './lazyScreen';

afterEach(cleanup);

function Hello({ name }: { name: string }) {
  return <p>hello {name}</p>;
}

describe('lazyScreen', () => {
  it('suspends before its code is here and loads it once', async () => {
    const load = vi.fn(() => Promise.resolve(Hello));
    const Screen = lazyScreen(load);
    render(
      <Suspense fallback={<p>loading</p>}>
        <Screen name="ada" />
      </Suspense>,
    );
    expect(screen.getByText('loading')).toBeTruthy();
    expect(await screen.findByText('hello ada')).toBeTruthy();
    await Screen.preload();
    expect(load).toHaveBeenCalledOnce();
  });

  it('renders at once, without a fallback, after preload', async () => {
    const Screen = lazyScreen(() => Promise.resolve(Hello));
    await act(() => Screen.preload());
    render(
      <Suspense fallback={<p>loading</p>}>
        <Screen name="bob" />
      </Suspense>,
    );
    // Synchronously: no fallback frame, no reveal delay.
    expect(screen.getByText('hello bob')).toBeTruthy();
    expect(screen.queryByText('loading')).toBeNull();
  });

  it('keeps the screen it opened, and what was typed in it, when the window draws again after its code arrived', async () => {
    // A screen opened before its code arrived keeps its state when the
    // window draws again (an approvals badge changing): React remounts a
    // component whose element changes type, so the screen must not switch
    // from the suspending wrapper to the loaded component under it.
    let mounts = 0;
    function Field() {
      const [text, setText] = useState(() => {
        mounts++;
        return '';
      });
      return <input aria-label="draft" value={text} onChange={(e) => setText(e.target.value)} />;
    }
    const Screen = lazyScreen(() => Promise.resolve(Field));
    function Window({ badge }: { badge: number }) {
      return (
        <>
          <span>{badge}</span>
          <Suspense fallback={<p>loading</p>}>
            <Screen />
          </Suspense>
        </>
      );
    }
    // The window opens on another screen and goes to this one, as a route
    // change does: in a transition.
    let go: (open: boolean) => void = () => {};
    function Shell({ badge }: { badge: number }) {
      const [open, setOpen] = useState(false);
      go = (o) => startTransition(() => setOpen(o));
      return open ? <Window badge={badge} /> : <p>home</p>;
    }
    const { rerender } = render(<Shell badge={0} />);
    act(() => go(true));
    const field = (await screen.findByRole('textbox', { name: 'draft' })) as HTMLInputElement;
    fireEvent.change(field, { target: { value: 'edited' } });
    rerender(<Shell badge={1} />);
    const after = screen.getByRole('textbox', { name: 'draft' }) as HTMLInputElement;
    expect(mounts).toBe(1);
    expect(after).toBe(field);
    expect(after.value).toBe('edited');
  });

  it('tries again after a failed fetch', async () => {
    const load = vi.fn<() => Promise<typeof Hello>>().mockRejectedValueOnce(new Error('offline')).mockResolvedValue(Hello);
    const Screen = lazyScreen(load);
    await expect(Screen.preload()).rejects.toThrow('offline');
    await Screen.preload();
    expect(load).toHaveBeenCalledTimes(2);
    render(<Screen name="cy" />);
    expect(screen.getByText('hello cy')).toBeTruthy();
  });
});
