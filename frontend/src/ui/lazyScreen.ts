// Screens load on first open, so the start-up chunk stays small. React's lazy
// alone suspends on every first open, and React holds a revealed Suspense
// boundary back for up to 300 ms; a screen whose code is already here must
// render at once. lazyScreen renders the loaded component directly once its
// module has arrived (by a first open, or by preload: main.tsx fetches the
// first screen's code before the first render), and suspends only before.
import { type ComponentType, type FunctionComponent, createElement, lazy, useState } from 'react';

/** A screen component that can fetch its code ahead of its first open. */
export type LazyScreen<P> = FunctionComponent<P> & { preload(): Promise<void> };

export function lazyScreen<P extends object>(load: () => Promise<ComponentType<P>>): LazyScreen<P> {
  let loaded: ComponentType<P> | undefined;
  let pending: Promise<void> | undefined;
  const preload = () =>
    (pending ??= load().then(
      (c) => {
        loaded = c;
      },
      (e: unknown) => {
        pending = undefined; // a failed fetch may be tried again
        throw e;
      },
    ));
  const Suspending = lazy(async () => {
    await preload();
    return { default: loaded! };
  });
  function Screen(props: P) {
    // A screen keeps the element it was first drawn with: React remounts a
    // component whose element changes type (the suspending wrapper, then
    // the loaded component), and would lose what the screen holds.
    const [direct] = useState(() => loaded !== undefined);
    return direct && loaded ? createElement(loaded, props) : createElement(Suspending, props);
  }
  return Object.assign(Screen, { preload });
}
