import { describe, expect, it, vi } from 'vitest';
import bootSource from '../../public/theme-boot.js?raw';
import { THEME_KEY, createTheme, resolveTheme, themeChoice, type ThemeEnv } from './theme';

/** A media query list whose answer the test flips, as the OS would. */
function fakeMedia(dark: boolean) {
  const listeners = new Set<(e: { matches: boolean }) => void>();
  const mql = {
    matches: dark,
    addEventListener: (_: 'change', cb: (e: { matches: boolean }) => void) => listeners.add(cb),
    removeEventListener: (_: 'change', cb: (e: { matches: boolean }) => void) => listeners.delete(cb),
  };
  return {
    mql,
    listeners,
    flip(to: boolean) {
      mql.matches = to;
      for (const cb of [...listeners]) cb({ matches: to });
    },
  };
}

function fakeEnv(systemDark: boolean, stored: string | null = null) {
  const attrs = new Map<string, string>();
  const style: { colorScheme: string } = { colorScheme: '' };
  const store = new Map<string, string>(stored === null ? [] : [[THEME_KEY, stored]]);
  const media = fakeMedia(systemDark);
  const env: ThemeEnv = {
    root: { setAttribute: (k, v) => attrs.set(k, v), style },
    storage: { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => void store.set(k, v) },
    media: () => media.mql,
  };
  return { env, attrs, style, store, media };
}

describe('themeChoice', () => {
  it('reads light, dark and system, and takes anything else for system', () => {
    expect(themeChoice('light')).toBe('light');
    expect(themeChoice('dark')).toBe('dark');
    expect(themeChoice('system')).toBe('system');
    expect(themeChoice('')).toBe('system');
    expect(themeChoice(null)).toBe('system');
    expect(themeChoice('neon')).toBe('system');
  });
});

describe('resolveTheme', () => {
  it('keeps an explicit choice whatever the system says', () => {
    expect(resolveTheme('light', true)).toBe('light');
    expect(resolveTheme('dark', false)).toBe('dark');
  });
  it('follows the system for system', () => {
    expect(resolveTheme('system', true)).toBe('dark');
    expect(resolveTheme('system', false)).toBe('light');
  });
});

describe('createTheme', () => {
  it('starts from the choice remembered on this machine, before the backend answers', () => {
    const { env, attrs, style } = fakeEnv(false, 'dark');
    const theme = createTheme(env);
    expect(theme.choice()).toBe('dark');
    expect(attrs.get('data-theme')).toBe('dark');
    expect(style.colorScheme).toBe('dark');
  });

  it('applies a choice at once and remembers it', () => {
    const { env, attrs, store } = fakeEnv(true);
    const theme = createTheme(env);
    expect(attrs.get('data-theme')).toBe('dark');
    theme.set('light');
    expect(attrs.get('data-theme')).toBe('light');
    expect(store.get(THEME_KEY)).toBe('light');
  });

  it('follows the system live for system, and stops following for an explicit choice', () => {
    const { env, attrs, media } = fakeEnv(false);
    const theme = createTheme(env);
    theme.set('system');
    expect(attrs.get('data-theme')).toBe('light');
    media.flip(true);
    expect(attrs.get('data-theme')).toBe('dark');
    theme.set('light');
    media.flip(false);
    media.flip(true);
    expect(attrs.get('data-theme'), 'an explicit light stays light when the OS turns dark').toBe('light');
  });

  it('tells subscribers what is shown', () => {
    const { env, media } = fakeEnv(false);
    const theme = createTheme(env);
    const seen = vi.fn();
    const off = theme.subscribe(seen);
    theme.set('dark');
    theme.set('system');
    media.flip(true);
    off();
    theme.set('light');
    expect(seen.mock.calls).toEqual([['dark'], ['light'], ['dark']]);
  });

  it('works where storage throws (private windows) and without matchMedia', () => {
    const root = { setAttribute: vi.fn(), style: { colorScheme: '' } };
    const theme = createTheme({
      root,
      storage: {
        getItem: () => {
          throw new Error('denied');
        },
        setItem: () => {
          throw new Error('denied');
        },
      },
    });
    expect(theme.choice()).toBe('system');
    expect(root.setAttribute).toHaveBeenLastCalledWith('data-theme', 'light');
    theme.set('dark');
    expect(root.setAttribute).toHaveBeenLastCalledWith('data-theme', 'dark');
  });
});

// public/theme-boot.js runs before the stylesheet paints anything; it must
// reach the same answer as the module that takes over after it.
describe('theme-boot.js', () => {
  // Run as the page runs it: the script sees only the page's globals.
  const boot = new Function('document', 'localStorage', 'matchMedia', bootSource) as (
    document: unknown,
    localStorage: ThemeEnv['storage'],
    matchMedia: ThemeEnv['media'],
  ) => void;
  const cases: [string | null, boolean][] = [
    [null, false],
    [null, true],
    ['system', true],
    ['light', true],
    ['dark', false],
    ['neon', true],
  ];
  it.each(cases)('stored %s with a dark system %s', (stored, systemDark) => {
    const { env, attrs, style } = fakeEnv(systemDark, stored);
    boot({ documentElement: env.root }, env.storage, env.media);
    expect(attrs.get('data-theme')).toBe(resolveTheme(themeChoice(stored), systemDark));
    expect(style.colorScheme).toBe(attrs.get('data-theme'));
  });
});
