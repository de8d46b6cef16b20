import type { DucklmApi } from '../bridge';

/** MemoryView: being built this session (helper replaces this file). */
export function MemoryView(_: { api: DucklmApi }) {
  return <h1>Memory</h1>;
}
