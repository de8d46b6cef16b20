import { type DucklmApi } from '../bridge';
import { LocalDataPanel, hasLocalData } from '../settings/LocalData';
import { useLoad } from '../ui/useLoad';

/**
 * TeamLocalData is, on Home, what a team's installation says of the runs
 * and worlds it left on this machine's database: after the switch the lists
 * are the team's, and without it nothing would say where the rest went.
 * It shows nothing on the local database, or when nothing was left behind.
 */
export function TeamLocalData({ api }: { api: DucklmApi }) {
  const [load] = useLoad(() => api.getDatabase(), [api]);
  if (load.status !== 'ready' || !hasLocalData(load.value)) return null;
  return <LocalDataPanel api={api} view={load.value} />;
}
