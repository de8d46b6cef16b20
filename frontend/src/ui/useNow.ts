import { useEffect, useState } from 'react';

/** useNow returns the current time in ms, refreshed every `everyMs`, so relative times stay true. */
export function useNow(everyMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const id = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(id);
  }, [everyMs]);
  return now;
}
