// Settings (Go: settings, api).
// Part of the bridge's types: see types.ts for how they are written.
import type { ApprovalMode } from './types-runs';

/** Theme is the look the user chose; "system" follows the operating system. */
export type Theme = 'light' | 'dark' | 'system';

/** The model roles the router picks a model for (Go: router.Role). */
export type ModelRole = 'planner' | 'coder' | 'critic' | 'embedder';

/** Settings are the stored preferences (Go: settings.Settings); "" means ducklm's default. */
export interface Settings {
  /** host, host:port or a URL; "" uses OLLAMA_HOST. */
  ollamaHost: string;
  /** The default model per role; a missing role is left to the router. */
  models: Partial<Record<ModelRole, string>>;
  approvalMode: ApprovalMode | '';
  theme: Theme | '';
  /** Hosts web steps of new tasks reach without asking: example.com, *.example.com or an address. */
  allowedHosts?: string[];
  /** The memory limit of world programs in MiB (64 to 65536); 0 or absent is ducklm's 512. */
  worldMemoryMiB?: number;
  /**
   * Where this installation's portable task steps (world_search) do their work on a team's
   * database: "workers" or absent, the team's workers when one is alive; "here", this process.
   */
  taskSteps?: 'workers' | 'here';
  /** How many times a new task's run may review its results before it ends without an answer (1 to 20); 0 or absent is 4. */
  maxReviews?: number;
  /** The critic score below which a finished step of a model's plan counts as failed (above 0, at most 1); 0 or absent is 0.5. */
  criticThreshold?: number;
}

/** SettingsView is the settings screen's data (Go: api.SettingsView). */
export interface SettingsView {
  settings: Settings;
  dataDir: string;
  /** The Ollama host in use now. */
  ollamaHost: string;
  /** The host an empty host setting means. */
  defaultHost: string;
}

/** SettingsProblem is one refused field, e.g. "ollamaHost" or "models.planner" (Go: settings.Problem). */
export interface SettingsProblem {
  field: string;
  message: string;
}

/** SettingsCheck is what saving would refuse (Go: api.SettingsCheck). */
export interface SettingsCheck {
  valid: boolean;
  problems: SettingsProblem[];
}

/** SettingsSaved is what saving did (Go: api.Saved): a new host is in use at once. */
export interface SettingsSaved {
  /** As stored: spaces trimmed, roles left to the router dropped. */
  settings: Settings;
  /** The Ollama host in use from now on. */
  ollamaHost: string;
}

/** McpTool is what the router and the approval card know of an MCP server's tool (Go: backend.MCPTool). */
export interface McpTool {
  server: string;
  tool: string;
  /** What the server says of its tool: shown, never trusted on its own. */
  readOnlyHint?: boolean;
  /** The user marked it safe: ask_risky runs its calls without asking. */
  safe?: boolean;
  /** The call reaches the network (a URL server, or a command allowed it). */
  network?: boolean;
}

/** McpServerTool is one tool a server listed (Go: mcpclient.ToolStatus). */
export interface McpServerTool {
  /** As the server names it. */
  name: string;
  /** As plans name it: mcp__SERVER__TOOL. */
  catalog: string;
  description?: string;
  readOnlyHint?: boolean;
  safe?: boolean;
}

/** McpServer is one MCP server and how it stands (Go: mcpclient.ServerStatus). */
export interface McpServer {
  name: string;
  command?: string;
  args?: string[];
  url?: string;
  network?: boolean;
  workspace?: boolean;
  private?: boolean;
  safe?: string[];
  state: 'ready' | 'starting' | 'failed' | 'not started';
  /** Why it failed, in a sentence. */
  error?: string;
  tools: McpServerTool[];
  /** Its tools left out, each with why. */
  refused?: string[];
}

/** McpServerInput is a server to add (Go: api.MCPServerInput): a command and its arguments, or a URL. */
export interface McpServerInput {
  name: string;
  command: string;
  args: string[];
  url: string;
  network: boolean;
  workspace: boolean;
  private: boolean;
}
