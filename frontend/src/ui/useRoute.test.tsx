// @vitest-environment jsdom
import { act, cleanup, render } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { useRoute } from './useRoute';

afterEach(() => {
  cleanup();
  window.location.hash = '';
});

function Show({ seen }: { seen: string[] }) {
  const { route } = useRoute();
  seen.push(route.screen);
  return null;
}

describe('useRoute', () => {
  it('sees a hash that changed before it started listening', () => {
    const seen: string[] = [];
    window.location.hash = '#/';
    // The hash changes after the first render but before the effect runs:
    // the hashchange event of that change is never heard.
    const original = window.addEventListener.bind(window);
    window.addEventListener = ((type: string, fn: EventListenerOrEventListenerObject) => {
      if (type === 'hashchange') history.replaceState(null, '', '#/settings');
      original(type, fn);
    }) as typeof window.addEventListener;
    try {
      render(<Show seen={seen} />);
    } finally {
      window.addEventListener = original;
    }
    expect(seen.at(-1)).toBe('settings');
  });

  it('follows later changes and keeps the same route object when nothing changed', async () => {
    const routes: object[] = [];
    function Keep() {
      routes.push(useRoute().route);
      return null;
    }
    render(<Keep />);
    await act(async () => {
      window.location.hash = '#/lineage';
      window.dispatchEvent(new HashChangeEvent('hashchange'));
    });
    const lineage = routes.at(-1);
    expect(lineage).toEqual({ screen: 'lineage' });
    await act(async () => {
      window.dispatchEvent(new HashChangeEvent('hashchange'));
    });
    expect(routes.at(-1)).toBe(lineage);
  });
});
