import { Suspense, useCallback, useEffect, useState } from 'react';
import type { Approval, DucklmApi, Opened } from './bridge';
import { Home } from './home/Home';
import { type Route, type Section, fromOpen, href, sectionOf } from './lib/route';
import { DuckMark } from './ui/icons';
import { Opening } from './ui/LoadState';
import { ScreenBoundary } from './ui/ScreenBoundary';
import { lazyScreen } from './ui/lazyScreen';
import { useApprovals } from './ui/useApprovals';
import { navigate, useRoute } from './ui/useRoute';

// Home is in the first chunk; every other screen's code comes when it is
// first opened (navigation waits for it in a transition, see useRoute), so
// the editor (CodeMirror), the graph layout and the timeline stay out of the
// start-up bundle and out of an idle window's memory.
const NewTask = lazyScreen(() => import('./runs/NewTask').then((m) => m.NewTask));
const RunView = lazyScreen(() => import('./runs/RunView').then((m) => m.RunView));
const Worlds = lazyScreen(() => import('./worlds/Worlds').then((m) => m.Worlds));
const WorldView = lazyScreen(() => import('./worlds/WorldView').then((m) => m.WorldView));
const LineageView = lazyScreen(() => import('./lineage/LineageView').then((m) => m.LineageView));
const TimelineView = lazyScreen(() => import('./timeline/TimelineView').then((m) => m.TimelineView));
const MemoryView = lazyScreen(() => import('./memory/MemoryView').then((m) => m.MemoryView));
const WorkersView = lazyScreen(() => import('./workers/WorkersView').then((m) => m.WorkersView));
const SettingsView = lazyScreen(() => import('./settings/SettingsView').then((m) => m.SettingsView));

/**
 * screenCode fetches the code of the screen a route shows, so a window that
 * starts on it (a reload, `ducklm open`) draws it in its first render
 * instead of a fallback React reveals up to 300 ms late.
 */
export function screenCode(r: Route): Promise<void> {
  const screen = {
    home: undefined,
    new: NewTask,
    run: RunView,
    worlds: Worlds,
    world: WorldView,
    lineage: LineageView,
    timeline: TimelineView,
    memory: MemoryView,
    workers: WorkersView,
    settings: SettingsView,
  }[r.screen];
  return screen ? screen.preload() : Promise.resolve();
}

interface AppProps {
  api: DucklmApi;
}

const NAV: readonly { section: Section; label: string; href: string }[] = [
  { section: 'home', label: 'Runs', href: href({ screen: 'home' }) },
  { section: 'new', label: 'New task', href: href({ screen: 'new' }) },
  { section: 'worlds', label: 'Worlds', href: href({ screen: 'worlds' }) },
  { section: 'lineage', label: 'Lineage', href: href({ screen: 'lineage' }) },
  { section: 'memory', label: 'Memory', href: href({ screen: 'memory' }) },
  { section: 'workers', label: 'Workers', href: href({ screen: 'workers' }) },
  { section: 'settings', label: 'Settings', href: href({ screen: 'settings' }) },
];

/** SCREEN_NAMES names each screen in the sentence a failed screen shows. */
const SCREEN_NAMES: Record<Route['screen'], string> = {
  home: 'the runs',
  new: 'the new task form',
  run: 'the run',
  worlds: 'the worlds',
  world: 'the world',
  lineage: 'the lineage',
  timeline: 'the timeline',
  memory: 'the memory',
  workers: 'the workers',
  settings: 'the settings',
};

/** App is the window's shell: a sidebar with the sections and the current screen. */
export function App({ api }: AppProps) {
  const [version, setVersion] = useState<string>();
  const { route, pending } = useRoute();
  const section = sectionOf(route);
  const openApproval = useCallback((a: Approval) => navigate({ screen: 'run', runId: a.runId }), []);
  const { approvals, permission, askPermission } = useApprovals(api, openApproval);
  const waiting = approvals.length;
  const [openError, setOpenError] = useState<string>();

  // `ducklm open …` names a screen: at start (asked once) and later, when a
  // second launch brings this window forward.
  useEffect(() => {
    let live = true;
    const show = (o: Opened) => {
      if (!live) return;
      if (o.route.screen !== '') navigate(fromOpen(o.route));
      setOpenError(o.error || undefined);
    };
    api.takeOpen().then(show, () => {});
    const off = api.onNavigate(show);
    return () => {
      live = false;
      off();
    };
  }, [api]);

  return (
    <div className="app">
      <nav className="sidebar" aria-label="Sections">
        <div className="brand">
          <DuckMark />
          <span className="app-name">ducklm</span>
          {version !== undefined && (
            <span className="app-version" title={`ducklm ${version}`}>
              {versionLabel(version)}
            </span>
          )}
        </div>
        <ul className="nav-list">
          {NAV.map((n) => (
            <li key={n.section}>
              <a
                href={n.href}
                className={`nav-item${section === n.section ? ' active' : ''}`}
                aria-current={section === n.section ? 'page' : undefined}
                aria-label={n.label}
                data-nav={n.section}
              >
                <span>{n.label}</span>
                {n.section === 'home' && waiting > 0 && (
                  <span className="nav-badge" data-testid="approvals-badge" title={`${waiting} waiting for your approval`}>
                    {waiting}
                  </span>
                )}
              </a>
            </li>
          ))}
        </ul>
        <p className="sr-only" role="status">
          {waiting > 0 ? `${waiting} ${waiting === 1 ? 'approval' : 'approvals'} waiting` : ''}
        </p>
        <div className="sidebar-foot">
          {permission === 'default' && (
            <button type="button" className="link-button" onClick={askPermission}>
              Notify me of approvals
            </button>
          )}
          {permission === 'denied' && <span className="muted small">Desktop notifications are off for this app.</span>}
        </div>
      </nav>
      <main className="app-main" aria-busy={pending || undefined} inert={pending || undefined}>
        {openError && (
          <div className="panel error-panel open-error" role="alert">
            <span>{openError}</span>
            <button type="button" className="link-button" onClick={() => setOpenError(undefined)}>
              Dismiss
            </button>
          </div>
        )}
        <ScreenBoundary resetKey={href(route)} screen={SCREEN_NAMES[route.screen]}>
          {route.screen === 'home' && <Home api={api} onVersion={setVersion} />}
          <Suspense fallback={<Opening what="the screen" />}>
          {route.screen === 'new' && <NewTask api={api} />}
          {route.screen === 'run' && <RunView key={route.runId} api={api} runId={route.runId} />}
          {route.screen === 'worlds' && <Worlds api={api} />}
          {route.screen === 'world' && <WorldView key={route.runId} api={api} runId={route.runId} />}
          {route.screen === 'lineage' && <LineageView api={api} {...(route.select ? { select: route.select } : {})} {...(route.compare ? { compare: route.compare } : {})} />}
          {route.screen === 'timeline' && (
            <TimelineView key={route.runId} api={api} runId={route.runId} {...(route.seq ? { seq: route.seq } : {})} />
          )}
          {route.screen === 'memory' && <MemoryView api={api} />}
          {route.screen === 'workers' && <WorkersView api={api} />}
          {route.screen === 'settings' && <SettingsView api={api} section={route.section} />}
          </Suspense>
        </ScreenBoundary>
      </main>
    </div>
  );
}

/** versionLabel is a release as "v0.3.1", and a build of a commit ("8b2378c", "dev") as it is, not "v8b2378c". */
export function versionLabel(version: string): string {
  return /^v?\d+\.\d+/.test(version) ? `v${version.replace(/^v/, '')}` : version;
}
