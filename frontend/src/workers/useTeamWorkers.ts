import { useEffect, useState } from 'react';
import type { DucklmApi, WorkersView } from '../bridge';

/**
 * useTeamWorkers reads the team's workers whenever `idle` becomes true (a
 * screen opens, or its work on them ends) and keeps the last answer while
 * work is under way; undefined until read, or when they cannot be read.
 * The world view and the Deliberate dialog offer the workers with it.
 */
export function useTeamWorkers(api: DucklmApi, idle: boolean): WorkersView | undefined {
  const [team, setTeam] = useState<WorkersView>();
  useEffect(() => {
    if (!idle) return;
    let live = true;
    api.workers().then(
      (v) => live && setTeam(v),
      () => live && setTeam(undefined),
    );
    return () => {
      live = false;
    };
  }, [api, idle]);
  return team;
}
