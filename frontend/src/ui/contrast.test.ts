import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// Read as a file: Vitest hands stylesheets imported by modules over empty.
const css = readFileSync(new URL('../tokens.css', import.meta.url), 'utf8');

/** palette reads the custom properties of the first rule whose selector is selector. */
function palette(selector: string): Record<string, string> {
  const start = css.indexOf(`${selector} {`);
  expect(start, selector).toBeGreaterThanOrEqual(0);
  const body = css.slice(start, css.indexOf('}', start));
  return Object.fromEntries([...body.matchAll(/(--[\w-]+):\s*(#[0-9a-f]{6})/gi)].map((m) => [m[1]!, m[2]!]));
}

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

function ratio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

describe('grid walls', () => {
  it('stand out from the grid by at least 3:1 (WCAG, graphics) in both themes', () => {
    for (const selector of [':root', ":root[data-theme='dark']"]) {
      const p = palette(selector);
      expect(ratio(p['--grid-wall']!, p['--surface']!), selector).toBeGreaterThanOrEqual(3);
    }
  });
});

describe('the accent', () => {
  it('reads as text on a surface by at least 4.5:1 (WCAG, text) in both themes', () => {
    for (const selector of [':root', ":root[data-theme='dark']"]) {
      const p = palette(selector);
      expect(ratio(p['--accent']!, p['--surface']!), selector).toBeGreaterThanOrEqual(4.5);
      expect(ratio(p['--accent']!, p['--surface-2']!), selector).toBeGreaterThanOrEqual(4.5);
    }
  });
});
