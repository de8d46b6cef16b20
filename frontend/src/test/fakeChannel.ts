// A Channel whose answers a test controls, so component tests run the real
// DucklmApi (createApi) and its normalisation over fake Go answers.
import { vi } from 'vitest';
import { act } from '@testing-library/react';
import { createApi } from '../bridge/api';
import type { Channel } from '../bridge/channel';
import { BridgeError } from '../bridge/errors';
import type { DucklmApi } from '../bridge/types';

type Handler = (...args: never[]) => unknown;

/** FakeChannel is a Channel plus the test's controls. */
export interface FakeChannel extends Channel {
  /** call, as a mock, to inspect what was asked. */
  call: ReturnType<typeof vi.fn<(method: string, args: unknown[]) => Promise<unknown>>>;
  /** handle sets (or replaces) the answer of a method. */
  handle(method: string, fn: Handler): void;
  /** emit delivers payload to the listeners of event, inside act(). */
  emit(event: string, payload: unknown): void;
  listenerCount(event: string): number;
  /** calls lists the argument arrays a method was called with. */
  calls(method: string): unknown[][];
}

/**
 * fakeChannel returns a channel answering each method with handlers[method]
 * (a value or a function of the call's arguments; a thrown error or a
 * rejected promise becomes a BridgeError). A method without a handler rejects
 * with a sentence naming it, so a test sees what it forgot.
 */
export function fakeChannel(handlers: Record<string, Handler> = {}): FakeChannel {
  const table = new Map<string, Handler>(Object.entries(handlers));
  const listeners = new Map<string, Set<(payload: unknown) => void>>();
  const call = vi.fn(async (method: string, args: unknown[]) => {
    const h = table.get(method);
    if (!h) throw new BridgeError(`the fake channel has no answer for ${method}`);
    try {
      return await (h as (...a: unknown[]) => unknown)(...args);
    } catch (e) {
      throw e instanceof BridgeError ? e : new BridgeError(e instanceof Error ? e.message : String(e));
    }
  });
  return {
    name: 'fake',
    call,
    on(event, cb) {
      const set = listeners.get(event) ?? new Set();
      listeners.set(event, set);
      set.add(cb);
      return () => set.delete(cb);
    },
    handle(method, fn) {
      table.set(method, fn);
    },
    emit(event, payload) {
      act(() => {
        for (const cb of [...(listeners.get(event) ?? [])]) cb(payload);
      });
    },
    listenerCount: (event) => listeners.get(event)?.size ?? 0,
    calls: (method) => call.mock.calls.filter(([m]) => m === method).map(([, args]) => args),
  };
}

/** fakeApi returns the real DucklmApi over a fake channel, and the channel. */
export function fakeApi(handlers: Record<string, Handler> = {}): { api: DucklmApi; channel: FakeChannel } {
  const channel = fakeChannel(handlers);
  return { api: createApi(channel), channel };
}
