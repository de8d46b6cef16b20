// The theme: light, dark, or the system's, shown as data-theme="light|dark"
// on <html> (tokens.css keys its dark palette on it). The choice is stored in
// the settings (settings.json); this module remembers the last one on this
// machine too, so public/theme-boot.js can paint the right colours before
// the backend answers, and it follows the OS live while the choice is
// "system".
import type { DucklmApi, Theme } from '../bridge/types';

export type { Theme } from '../bridge/types';

/** What the page shows: never "system". */
export type Shown = 'light' | 'dark';

/** Where the last choice is remembered (public/theme-boot.js reads the same key). */
export const THEME_KEY = 'ducklm.theme';

/** The media query of a dark system. */
export const DARK_QUERY = '(prefers-color-scheme: dark)';

/** themeChoice reads a stored or sent value; "" and anything unknown mean system. */
export function themeChoice(v: unknown): Theme {
  return v === 'light' || v === 'dark' ? v : 'system';
}

/** resolveTheme is what a choice shows on a system that is dark or not. */
export function resolveTheme(choice: Theme, systemDark: boolean): Shown {
  if (choice === 'system') return systemDark ? 'dark' : 'light';
  return choice;
}

interface MediaList {
  matches: boolean;
  addEventListener(type: 'change', cb: (e: { matches: boolean }) => void): void;
  removeEventListener(type: 'change', cb: (e: { matches: boolean }) => void): void;
}

/** ThemeEnv is what the theme touches; the defaults are the page's. */
export interface ThemeEnv {
  root: { setAttribute(name: string, value: string): void; style: { colorScheme: string } };
  storage?: Pick<Storage, 'getItem' | 'setItem'> | undefined;
  media?: ((query: string) => MediaList) | undefined;
}

/** ThemeControl applies the choice and keeps applying it as the system changes. */
export interface ThemeControl {
  choice(): Theme;
  shown(): Shown;
  /** set shows choice at once and remembers it on this machine. */
  set(choice: Theme): void;
  /** subscribe hears what is shown after each change; it returns its unsubscribe. */
  subscribe(cb: (shown: Shown) => void): () => void;
}

function attempt<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined; // storage can be denied (private windows, sandboxed pages): the theme still applies
  }
}

/** createTheme applies the remembered choice (system when none) and returns its control. */
export function createTheme(env: ThemeEnv): ThemeControl {
  const media = attempt(() => env.media?.(DARK_QUERY));
  const listeners = new Set<(s: Shown) => void>();
  let choice = themeChoice(attempt(() => env.storage?.getItem(THEME_KEY)));
  let shown: Shown | undefined;

  const apply = () => {
    const next = resolveTheme(choice, media?.matches ?? false);
    env.root.setAttribute('data-theme', next);
    // Native controls, scrollbars and the canvas default follow this.
    env.root.style.colorScheme = next;
    if (next === shown) return;
    const first = shown === undefined;
    shown = next;
    if (!first) for (const cb of [...listeners]) cb(next);
  };
  // The listener stays for the page's life: it only acts while the choice is system.
  media?.addEventListener('change', () => {
    if (choice === 'system') apply();
  });
  apply();

  return {
    choice: () => choice,
    shown: () => shown ?? 'light',
    set(next) {
      choice = next;
      attempt(() => env.storage?.setItem(THEME_KEY, next));
      apply();
    },
    subscribe(cb) {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
  };
}

let pageTheme: ThemeControl | undefined;

/** theme is the page's control, created on first use. */
export function theme(): ThemeControl {
  pageTheme ??= createTheme({
    root: document.documentElement,
    storage: attempt(() => window.localStorage),
    media: typeof window.matchMedia === 'function' ? (q) => window.matchMedia(q) : undefined,
  });
  return pageTheme;
}

/**
 * startTheme shows the remembered theme now and the stored setting once the
 * backend answers. A backend that does not answer leaves the remembered one:
 * the screens say what is wrong.
 */
export function startTheme(api: Pick<DucklmApi, 'getSettings'>): Promise<void> {
  const t = theme();
  return api.getSettings().then(
    (v) => t.set(themeChoice(v.settings.theme)),
    () => undefined,
  );
}
