import { useEffect, useState, useTransition } from 'react';
import { type Route, href, parseRoute } from '../lib/route';

/**
 * useRoute follows the location hash. It also says when a route is pending:
 * the change is a transition, so while a screen opened for the first time
 * fetches its code the current one stays (rather than a fallback React
 * reveals late: it holds Suspense fallbacks back up to 300 ms), and the
 * shell shows it is on its way and takes no clicks meant for the old one.
 */
export function useRoute(): { route: Route; pending: boolean } {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  const [pending, startTransition] = useTransition();
  useEffect(() => {
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
  return { route, pending };
}

/** navigate goes to a route (a new history entry, so Back returns). */
export function navigate(r: Route): void {
  window.location.hash = href(r);
}
