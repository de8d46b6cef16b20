// The window's screens are addressed by the URL hash ("#/runs/run_…"), so a
// reload keeps the place, the back button works, and a nav item is a plain
// link the desktop smoke test can click. No router library: nine routes.

/** Route is a screen and what it shows. */
export type Route =
  | { screen: 'home' }
  | { screen: 'new' }
  | { screen: 'run'; runId: string }
  | { screen: 'worlds' }
  | { screen: 'world'; runId: string }
  | { screen: 'lineage'; select?: string; compare?: [string, string] }
  | { screen: 'timeline'; runId: string; seq?: number; world?: true }
  | { screen: 'memory' }
  | { screen: 'workers' }
  | { screen: 'settings'; section?: 'database' | 'tools' };

/** The top-level sections of the sidebar. */
export type Section = 'home' | 'new' | 'worlds' | 'lineage' | 'memory' | 'workers' | 'settings';

function segment(s: string | undefined): string | undefined {
  if (s === undefined || s === '') return undefined;
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

/** parseRoute reads a location hash; anything unknown is home. */
export function parseRoute(hash: string): Route {
  const [path = '', query = ''] = hash.replace(/^#/, '').split('?');
  const parts = path.split('/').filter((p) => p !== '');
  const q = new URLSearchParams(query);
  const id = segment(parts[1]);
  switch (parts[0]) {
    case 'new':
      return { screen: 'new' };
    case 'runs':
      return id ? { screen: 'run', runId: id } : { screen: 'home' };
    case 'worlds':
      return id ? { screen: 'world', runId: id } : { screen: 'worlds' };
    case 'lineage': {
      const select = q.get('select');
      // compare=RUN,RUN: the two runs compared side by side (ducklm open compare).
      const pair = (q.get('compare') ?? '').split(',').filter((x) => x !== '');
      const compare = pair.length === 2 ? { compare: [pair[0]!, pair[1]!] as [string, string] } : {};
      return select ? { screen: 'lineage', select, ...compare } : { screen: 'lineage', ...compare };
    }
    case 'memory':
      return { screen: 'memory' };
    case 'workers':
      return { screen: 'workers' };
    case 'settings':
      // settings/database: the Database field brought into view (the Workers screen links it);
      // settings/tools: the MCP servers (ducklm open tools).
      return parts[1] === 'database' || parts[1] === 'tools' ? { screen: 'settings', section: parts[1] } : { screen: 'settings' };
    case 'timeline': {
      if (!id) return { screen: 'home' };
      const seq = Number(q.get('seq'));
      // world: a simulated world's timeline (its sidebar section is Worlds, not Runs).
      const world = q.get('world') === '1' ? { world: true as const } : {};
      return Number.isInteger(seq) && seq > 0 ? { screen: 'timeline', runId: id, seq, ...world } : { screen: 'timeline', runId: id, ...world };
    }
    default:
      return { screen: 'home' };
  }
}

/** href returns the hash of a route, for links. */
export function href(r: Route): string {
  switch (r.screen) {
    case 'home':
      return '#/';
    case 'new':
      return '#/new';
    case 'run':
      return `#/runs/${encodeURIComponent(r.runId)}`;
    case 'worlds':
      return '#/worlds';
    case 'world':
      return `#/worlds/${encodeURIComponent(r.runId)}`;
    case 'lineage':
      return `#/lineage${lineageQuery(r)}`;
    case 'timeline': {
      const q = [r.seq ? `seq=${r.seq}` : '', r.world ? 'world=1' : ''].filter(Boolean).join('&');
      return `#/timeline/${encodeURIComponent(r.runId)}${q ? `?${q}` : ''}`;
    }
    case 'memory':
      return '#/memory';
    case 'workers':
      return '#/workers';
    case 'settings':
      return r.section ? `#/settings/${r.section}` : '#/settings';
  }
}

/** sectionOf says which sidebar item a route belongs to. */
export function sectionOf(r: Route): Section {
  switch (r.screen) {
    case 'home':
    case 'run':
      return 'home';
    case 'new':
      return 'new';
    case 'worlds':
    case 'world':
      return 'worlds';
    case 'lineage':
      return 'lineage';
    case 'timeline':
      return r.world ? 'worlds' : 'home';
    case 'memory':
      return 'memory';
    case 'workers':
      return 'workers';
    case 'settings':
      return 'settings';
  }
}

/** OpenRoute is a route as Go describes it (Go: api.OpenRoute), from `ducklm open`. */
export interface OpenRoute {
  screen: string;
  runId?: string;
  select?: string;
  seq?: number;
  compare?: string[];
  /** A simulated world's timeline (its sidebar section is Worlds). */
  world?: boolean;
  /** A part of the screen to bring into view (Settings' "tools"). */
  section?: string;
}

/** fromOpen reads a route Go sent; anything it does not know is home. */
export function fromOpen(o: OpenRoute): Route {
  const screen = o.screen === 'settings' && o.section ? `settings/${o.section}` : o.screen;
  const h = `#/${screen === 'home' ? '' : screen === 'run' ? 'runs' : screen === 'world' ? 'worlds' : screen}`;
  const id = o.runId ? `/${encodeURIComponent(o.runId)}` : '';
  const params = new URLSearchParams();
  if (o.select) params.set('select', o.select);
  if (o.seq) params.set('seq', String(o.seq));
  if (o.world) params.set('world', '1');
  const compare = o.compare?.length === 2 ? `compare=${o.compare.map(encodeURIComponent).join(',')}` : '';
  const all = [params.toString(), compare].filter((x) => x !== '').join('&');
  const q = all === '' ? '' : `?${all}`;
  return parseRoute(h + id + q);
}

/** lineageQuery is the lineage route's query: the world selected, the runs compared. */
function lineageQuery(r: { select?: string; compare?: [string, string] }): string {
  const q = new URLSearchParams();
  if (r.select) q.set('select', r.select);
  const s = q.toString();
  const compare = r.compare ? `compare=${r.compare.map(encodeURIComponent).join(',')}` : '';
  const all = [s, compare].filter((x) => x !== '').join('&');
  return all === '' ? '' : `?${all}`;
}
