import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The design-token check: a var() of a custom property defined nowhere draws
// nothing, silently (issue 30: --accent marked no checkpoint, no Find match,
// no fork row, no search progress). So every custom property the sources use
// must be defined in the light palette (`:root`), and every light token must
// also be in the dark one (`:root[data-theme='dark']`) unless it is named
// here as the same in both themes.

/** Tokens that do not change with the theme: the brand's colours, type and spacing. */
const SAME_IN_BOTH_THEMES = new Set(['--duck-yellow', '--duck-orange', '--font', '--mono', '--radius', '--gap']);

const SRC = new URL('../', import.meta.url);
const files = readdirSync(SRC, { recursive: true })
  .filter((f) => /\.(css|tsx?)$/.test(f) && !/\.test\.tsx?$/.test(f) && !f.endsWith('.d.ts'))
  .map((f) => ({ name: f, text: readFileSync(new URL(f, SRC), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '') }));

const LIGHT = ':root';
const DARK = /^:root\[data-theme=['"]dark['"]\]$/;

const light = new Set<string>();
const dark = new Set<string>();
/** The files that define palette tokens (a custom property on `:root` or the dark palette). */
const paletteFiles = new Set<string>();
/** Properties set on an element by a rule (not a palette) or by code (setProperty, a style object). */
const local = new Set<string>();
/** Each property used, with the files that use it. */
const used = new Map<string, Set<string>>();
/** Prefixes of properties whose name code builds (`--score-${i}`). */
const prefixes = new Map<string, Set<string>>();

const add = (m: Map<string, Set<string>>, key: string, file: string) => m.set(key, (m.get(key) ?? new Set()).add(file));

for (const { name, text } of files) {
  for (const m of text.matchAll(/var\(\s*(--[\w-]+)/g)) add(used, m[1]!, name);
  if (name.endsWith('.css')) {
    for (const [, selector, body] of text.matchAll(/([^{}]+)\{([^{}]*)\}/g)) {
      const sel = selector!.trim();
      const into = sel === LIGHT ? light : DARK.test(sel) ? dark : local;
      for (const d of body!.matchAll(/(--[\w-]+)\s*:/g)) {
        into.add(d[1]!);
        if (into !== local) paletteFiles.add(name);
      }
    }
    continue;
  }
  for (const m of text.matchAll(/setProperty\(\s*['"`](--[\w-]+)['"`]/g)) local.add(m[1]!);
  for (const m of text.matchAll(/['"](--[\w-]+)['"]\s*:/g)) local.add(m[1]!);
  // A name in a string is a read (getPropertyValue), unless it was a key above.
  for (const m of text.matchAll(/['"](--[a-z][\w-]*)['"](?!\s*:)/g)) add(used, m[1]!, name);
  for (const m of text.matchAll(/`(--[a-z][\w-]*?)\$\{/g)) add(prefixes, m[1]!, name);
}

const where = (m: Map<string, Set<string>>, key: string) => `${key} (${[...m.get(key)!].join(', ')})`;

describe('design tokens', () => {
  it('reads the sources it checks', () => {
    for (const sheet of ['tokens.css', 'base.css', 'home/home.css', 'runs/runs.css', 'worlds/worlds.css', 'lineage/lineage.css', 'timeline/timeline.css']) {
      expect(files.map((f) => f.name.split('\\').join('/'))).toContain(sheet);
    }
    expect(light.size).toBeGreaterThan(20);
    expect(dark.size).toBeGreaterThan(20);
    expect(used.size).toBeGreaterThan(20);
  });

  it('defines every custom property the sources use', () => {
    const missing = [...used.keys()].filter((v) => !light.has(v) && !local.has(v)).map((v) => where(used, v));
    expect(missing).toEqual([]);
    const unmatched = [...prefixes.keys()].filter((p) => ![...light].some((v) => v.startsWith(p))).map((p) => where(prefixes, p));
    expect(unmatched).toEqual([]);
  });

  it('keeps the palettes in one file, tokens.css', () => {
    expect([...paletteFiles]).toEqual(['tokens.css']);
  });

  it('defines every token in both themes', () => {
    expect([...light].filter((v) => !dark.has(v) && !SAME_IN_BOTH_THEMES.has(v))).toEqual([]);
    expect([...dark].filter((v) => !light.has(v))).toEqual([]);
  });
});
