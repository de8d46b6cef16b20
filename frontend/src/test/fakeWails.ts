// A stand-in for what the Wails window injects (window.go and
// window.runtime), so bridge tests run the real generated bindings.
import { vi } from 'vitest';

type Listener = (...data: unknown[]) => void;
type Mock = ReturnType<typeof vi.fn>;

/** The methods the generated bindings call (wailsjs/go/app/App.d.ts). */
export const METHODS = [
  'Answer',
  'ApplyDeliberation',
  'Approvals',
  'CancelDeliberation',
  'CancelReindex',
  'CancelRun',
  'CancelWorldRun',
  'CheckSettings',
  'CheckpointWorld',
  'Checks',
  'ChooseBundleToOpen',
  'ChooseBundleToSave',
  'ChooseFolder',
  'CreateWorld',
  'DeleteMemory',
  'Deliberate',
  'Deliberations',
  'Diff',
  'ExportBundle',
  'Fork',
  'ForgetSigner',
  'GetSettings',
  'History',
  'HistoryTypes',
  'ImportBundle',
  'Lineage',
  'LineageOutline',
  'ListWorlds',
  'ListMemories',
  'MemoryDetail',
  'MemoryEmbedders',
  'MemoryStatus',
  'Models',
  'NativeDialogs',
  'Overview',
  'ReindexMemories',
  'ResumeRun',
  'RiskRules',
  'RunAtCheckpoint',
  'RunDetail',
  'RunWorld',
  'Runs',
  'SaveSettings',
  'SearchHistory',
  'SearchMemories',
  'StatesAt',
  'StepScreenshot',
  'SubmitTask',
  'SuggestBundlePath',
  'TakeOpen',
  'TestOllama',
  'GetDatabase',
  'TestDatabase',
  'SaveDatabase',
  'CopyLocalToTeam',
  'RestartApp',
  'Workers',
  'ToolCatalog',
  'MCPServers',
  'StepImage',
  'AddMCPServer',
  'RemoveMCPServer',
  'TestMCPServer',
  'MarkMCPToolSafe',
  'TrustSigner',
  'TrustedSigners',
  'ValidatePlan',
  'Verify',
  'VerifyBundle',
  'WorldDetail',
  'WorldExamples',
] as const;

export type Method = (typeof METHODS)[number];

/** FakeWails is the fake window.go / window.runtime pair and its controls. */
export type FakeWails = Record<Method, Mock> & {
  ClipboardSetText: Mock;
  /** emit delivers data to every listener of name, as Go's EventsEmit does. */
  emit(name: string, ...data: unknown[]): void;
  listenerCount(name: string): number;
  uninstall(): void;
};

/** installFakeWails puts a fake window.go and window.runtime on globalThis. */
export function installFakeWails(): FakeWails {
  const listeners = new Map<string, Set<Listener>>();
  const methods = Object.fromEntries(METHODS.map((m) => [m, vi.fn()])) as Record<Method, Mock>;
  const ClipboardSetText = vi.fn(async () => true);
  const g = globalThis as Record<string, unknown>;
  g.go = { app: { App: methods } };
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
    ...methods,
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
