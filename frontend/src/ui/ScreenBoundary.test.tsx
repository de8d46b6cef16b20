// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ScreenBoundary } from './ScreenBoundary';

afterEach(cleanup);

function Boom({ fail }: { fail: boolean }): ReactNode {
  if (fail) throw new TypeError('l is not a function');
  return <p>the screen</p>;
}

describe('ScreenBoundary', () => {
  it('shows a sentence, the details to copy and a reload instead of a blank screen', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const reload = vi.fn();
    const copy = vi.fn(() => Promise.resolve());
    render(
      <ScreenBoundary screen="the lineage" reload={reload} copy={copy}>
        <Boom fail />
      </ScreenBoundary>,
    );
    const alert = screen.getByRole('alert');
    expect(alert.textContent).toContain('Something went wrong while drawing the lineage.');
    expect(alert.textContent).toContain('TypeError: l is not a function');
    fireEvent.click(screen.getByRole('button', { name: 'Reload' }));
    expect(reload).toHaveBeenCalledTimes(1);
    fireEvent.click(screen.getByRole('button', { name: 'Copy the error details' }));
    expect(copy).toHaveBeenCalledWith(expect.stringContaining('TypeError: l is not a function'));
    vi.mocked(console.error).mockRestore();
  });

  it('draws the screen again when the route changes', () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const { rerender } = render(
      <ScreenBoundary screen="the lineage" resetKey="#/lineage">
        <Boom fail />
      </ScreenBoundary>,
    );
    expect(screen.getByTestId('screen-error')).toBeTruthy();
    rerender(
      <ScreenBoundary screen="the runs" resetKey="#/">
        <Boom fail={false} />
      </ScreenBoundary>,
    );
    expect(screen.queryByTestId('screen-error')).toBeNull();
    expect(screen.getByText('the screen')).toBeTruthy();
    vi.mocked(console.error).mockRestore();
  });
});
