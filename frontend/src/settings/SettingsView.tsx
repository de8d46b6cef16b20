import type { DucklmApi } from '../bridge';

/** SettingsView: being built this session (helper replaces this file). */
export function SettingsView(_: { api: DucklmApi }) {
  return <h1>Settings</h1>;
}
