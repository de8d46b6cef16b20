import { useEffect, useState } from 'react';
import { type Route, href, parseRoute } from '../lib/route';

/** useRoute follows the location hash. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}

/** navigate goes to a route (a new history entry, so Back returns). */
export function navigate(r: Route): void {
  window.location.hash = href(r);
}
