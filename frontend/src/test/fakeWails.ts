// A stand-in for what the Wails window injects (window.go and
// window.runtime), so bridge tests run the real generated bindings.
import { vi } from 'vitest';

type Listener = (...data: unknown[]) => void;

/** FakeWails is the fake window.go / window.runtime pair and its controls. */
export interface FakeWails {
  Overview: ReturnType<typeof vi.fn>;
  Checks: ReturnType<typeof vi.fn>;
  ClipboardSetText: ReturnType<typeof vi.fn>;
  /** emit delivers data to every listener of name, as Go's EventsEmit does. */
  emit(name: string, ...data: unknown[]): void;
  listenerCount(name: string): number;
  uninstall(): void;
}

/** installFakeWails puts a fake window.go and window.runtime on globalThis. */
export function installFakeWails(): FakeWails {
  const listeners = new Map<string, Set<Listener>>();
  const Overview = vi.fn();
  const Checks = vi.fn();
  const ClipboardSetText = vi.fn(async () => true);
  const g = globalThis as Record<string, unknown>;
  g.go = { app: { App: { Overview, Checks } } };
  g.runtime = {
    EventsOnMultiple(name: string, cb: Listener) {
      const set = listeners.get(name) ?? new Set<Listener>();
      listeners.set(name, set);
      set.add(cb);
      return () => set.delete(cb);
    },
    ClipboardSetText,
  };
  return {
    Overview,
    Checks,
    ClipboardSetText,
    emit(name, ...data) {
      for (const cb of [...(listeners.get(name) ?? [])]) cb(...data);
    },
    listenerCount: (name) => listeners.get(name)?.size ?? 0,
    uninstall() {
      delete g.go;
      delete g.runtime;
    },
  };
}
