// @vitest-environment jsdom
import { act, cleanup, render, screen } from '@testing-library/react';
import { Suspense } from 'react';
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
