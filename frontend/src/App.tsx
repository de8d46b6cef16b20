import { useCallback, useState } from 'react';
import type { Approval, DucklmApi } from './bridge';
import { Home } from './home/Home';
import { LineageView } from './lineage/LineageView';
import { type Section, href, sectionOf } from './lib/route';
import { NewTask } from './runs/NewTask';
import { RunView } from './runs/RunView';
import { TimelineView } from './timeline/TimelineView';
import { DuckMark } from './ui/icons';
import { useApprovals } from './ui/useApprovals';
import { navigate, useRoute } from './ui/useRoute';
import { WorldView } from './worlds/WorldView';
import { Worlds } from './worlds/Worlds';

interface AppProps {
  api: DucklmApi;
}

const NAV: readonly { section: Section; label: string; href: string }[] = [
  { section: 'home', label: 'Runs', href: href({ screen: 'home' }) },
  { section: 'new', label: 'New task', href: href({ screen: 'new' }) },
  { section: 'worlds', label: 'Worlds', href: href({ screen: 'worlds' }) },
  { section: 'lineage', label: 'Lineage', href: href({ screen: 'lineage' }) },
];

/** App is the window's shell: a sidebar with the sections and the current screen. */
export function App({ api }: AppProps) {
  const [version, setVersion] = useState<string>();
  const route = useRoute();
  const section = sectionOf(route);
  const openApproval = useCallback((a: Approval) => navigate({ screen: 'run', runId: a.runId }), []);
  const { approvals, permission, askPermission } = useApprovals(api, openApproval);
  const waiting = approvals.length;

  return (
    <div className="app">
      <nav className="sidebar" aria-label="Sections">
        <div className="brand">
          <DuckMark />
          <span className="app-name">ducklm</span>
          {version !== undefined && <span className="app-version">v{version.replace(/^v/, '')}</span>}
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
      <main className="app-main">
        {route.screen === 'home' && <Home api={api} onVersion={setVersion} />}
        {route.screen === 'new' && <NewTask api={api} />}
        {route.screen === 'run' && <RunView key={route.runId} api={api} runId={route.runId} />}
        {route.screen === 'worlds' && <Worlds api={api} />}
        {route.screen === 'world' && <WorldView key={route.runId} api={api} runId={route.runId} />}
        {route.screen === 'lineage' && <LineageView api={api} {...(route.select ? { select: route.select } : {})} />}
        {route.screen === 'timeline' && (
          <TimelineView key={route.runId} api={api} runId={route.runId} {...(route.seq ? { seq: route.seq } : {})} />
        )}
      </main>
    </div>
  );
}
