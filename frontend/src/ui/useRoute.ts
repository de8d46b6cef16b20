import { startTransition, useEffect, useState } from 'react';
import { type Route, href, parseRoute } from '../lib/route';

/** useRoute follows the location hash. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    // A transition: while a screen opened for the first time fetches its
    // code, the current one stays, rather than a fallback React reveals
    // late (it holds Suspense fallbacks back up to 300 ms).
    const on = () =>
      startTransition(() =>
        setRoute((prev) => {
          const next = parseRoute(window.location.hash);
          return href(next) === href(prev) ? prev : next;
        }),
      );
    window.addEventListener('hashchange', on);
    // The hash may have changed between the first render and now.
    on();
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}

/** navigate goes to a route (a new history entry, so Back returns). */
export function navigate(r: Route): void {
  window.location.hash = href(r);
}
