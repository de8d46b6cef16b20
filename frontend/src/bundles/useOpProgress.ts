import { useEffect, useState } from 'react';
import type { DucklmApi, Progress } from '../bridge';

/** useOpProgress follows the progress the backend reports for op (none while op is ""). */
export function useOpProgress(api: DucklmApi, op: string): Progress | undefined {
  const [progress, setProgress] = useState<Progress>();
  useEffect(() => {
    setProgress(undefined);
    if (op === '') return undefined;
    return api.onProgress((batch) => {
      const mine = batch.filter((p) => p.op === op);
      const last = mine[mine.length - 1];
      if (last) setProgress(last);
    });
  }, [api, op]);
  return progress;
}
