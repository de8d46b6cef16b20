package router

import (
	"ducklm/backend"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The tools the risk policy knows.
const (
	ToolShell       = "shell_exec"
	ToolFileRead    = "file_read"
	ToolFileWrite   = "file_write"
	ToolWorldSim    = "world_sim"
	ToolWorldSearch = "world_search"
	ToolWebFetch    = "web_fetch"
	ToolBrowser     = "browser"
	// ToolCoder stands for a coder step: a model writes a script, which then
	// runs as a sandboxed step.
	ToolCoder = "coder"
)

// Level is how risky a step is.
type Level int

// The risk levels, in increasing order.
const (
	Low Level = iota + 1
	Medium
	High
)

// String returns "low", "medium" or "high"; any other value is "high",
// because an unknown risk is treated as high everywhere.
func (l Level) String() string {
	switch l {
	case Low:
		return "low"
	case Medium:
		return "medium"
	}
	return "high"
}

// MarshalText encodes a level as its name.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText decodes a level from its name.
func (l *Level) UnmarshalText(text []byte) error {
	switch string(text) {
	case "low":
		*l = Low
	case "medium":
		*l = Medium
	case "high":
		*l = High
	default:
		return fmt.Errorf("risk level %q is not low, medium or high", text)
	}
	return nil
}

// normal maps any value outside Low..High to High.
func (l Level) normal() Level {
	if l < Low || l > High {
		return High
	}
	return l
}

// Assessment is the risk of one step, from its tool and args alone.
type Assessment struct {
	Level Level `json:"level"`
	// Rule is the id of the rule in Rules that decided the level.
	Rule string `json:"rule"`
	// Why says in a clause what the step does that made the rule apply.
	Why string `json:"why"`
	// Network is true when the step needs network access; the sandbox
	// grants it only to an approved step.
	Network bool `json:"network"`
	// Shell is true when the step runs a process on the machine (a shell
	// command, a generated script, web_fetch's web worker); without a
	// sandbox such a step always needs approval.
	Shell bool `json:"shell"`
}

// Rule is one row of the risk policy.
type Rule struct {
	ID          string `json:"id"`
	Level       Level  `json:"level"`
	Description string `json:"description"`
}

// The ids of the risk rules.
const (
	RuleReadOnly         = "read_only"
	RuleSimulation       = "simulation"
	RuleFileWrite        = "file_write"
	RuleShellSandboxed   = "shell_sandboxed"
	RuleShellUnsandboxed = "shell_unsandboxed"
	RuleNetwork          = "network"
	RuleDestructive      = "destructive"
	RulePrivilege        = "privilege"
	RuleGeneratedCode    = "generated_code"
	RuleUnknownTool      = "unknown_tool"
	RuleUnreadableArgs   = "unreadable_args"
	RuleInDoubt          = "in_doubt"
	RuleWebAllowed       = "web_allowed"
	RuleWebNewHost       = "web_new_host"
	RuleWebPrivate       = "web_private"
	RuleWebUnsandboxed   = "web_unsandboxed"
	RuleMCP              = "mcp_call"
	RuleMCPSafe          = "mcp_safe"
	RuleMCPNetwork       = "mcp_network"
)

// rules is the risk policy in one table. A shell command is matched by
// tokens, conservatively: a command word counts wherever it appears in the
// command, inside quotes or as an argument too, so `echo "rm -rf /"` and
// `bash -c 'curl x'` are flagged. When several shell rules match, the first
// in this order decides the rule (destructive, privilege, network) and Why
// names them all.
var rules = []Rule{
	{RuleReadOnly, Low, "file_read only reads a file inside the run's workspace."},
	{RuleSimulation, Low, "world_sim runs a deterministic simulated world; nothing outside it changes."},
	{RuleFileWrite, Medium, "file_write creates or changes a file inside the run's workspace."},
	{RuleShellSandboxed, Medium, "A shell command under bubblewrap: read-only system, writable workspace only, no network."},
	{RuleShellUnsandboxed, High, "A shell command without a sandbox (bubblewrap is unavailable) runs with the user's full rights."},
	{RuleDestructive, High, "The command can destroy data or stop the system: rm with -r/-R/--recursive, mkfs, dd, shred, wipefs, " +
		"fdisk, sfdisk, parted, blkdiscard, chmod/chown/chgrp -R, find -delete, a redirect or tee into /dev/ (other than " +
		"null, stdout, stderr, stdin, tty, fd), shutdown, reboot, halt, poweroff, killall, pkill."},
	{RulePrivilege, High, "The command asks for more privilege: sudo, su, doas, pkexec, runuser."},
	{RuleNetwork, High, "The command reaches the network, which the sandbox allows only to an approved step: curl, wget, ssh, " +
		"scp, sftp, rsync, nc, ncat, netcat, socat, telnet, ftp, ping, dig, nslookup; git clone/fetch/pull/push/ls-remote/submodule; " +
		"pip/npm/yarn/pnpm/gem/cargo/go/uv/docker/podman installs and pulls; system package managers (apt, apt-get, dnf, yum, pacman, apk, brew, snap, flatpak, zypper)."},
	{RuleWebAllowed, Low, "web_fetch or browser reaches a host you allowed for this run or in Settings."},
	{RuleWebNewHost, High, "web_fetch or browser reaches a host not allowed yet. Approving the step lets it reach that host (and only that host) " +
		"for this step; the approval card can allow the host for the rest of the run."},
	{RuleWebPrivate, High, "The URL names this machine or a private network (localhost, 127.x, 10.x, 172.16–31.x, 192.168.x, link-local): " +
		"approving the step is the explicit approval such an address needs. A host name that resolves to such an address is refused " +
		"after resolution unless it was approved this way."},
	{RuleWebUnsandboxed, High, "web_fetch without a sandbox (bubblewrap is unavailable): the page is fetched and read by a worker process " +
		"with the user's full rights, so every such step asks, even for an allowed host."},
	{RuleMCP, Medium, "A call to a tool of an MCP server you added. A server started from a command runs in the sandbox: read-only " +
		"system and its own files, a folder of its own (or the run's workspace when you said so), no network unless you allowed it. " +
		"The server's own readOnlyHint is shown on the card, never trusted on its own."},
	{RuleMCPSafe, Low, "A tool of an MCP server that you marked safe (Settings → Tools, or ducklm mcp safe)."},
	{RuleMCPNetwork, High, "A call to an MCP server that reaches the network: a server reached by URL, or a command you let reach the network."},
	{RuleGeneratedCode, High, "A coder step runs a script a model wrote; generated scripts always need approval."},
	{RuleUnknownTool, High, "A tool this policy does not know is treated as high risk."},
	{RuleUnreadableArgs, High, "The step's args could not be read, so nothing can be said about what it does."},
	{RuleInDoubt, High, "The step was running when ducklm stopped and may already have had its effect; running it again always needs a new approval."},
	{RuleAfterUntrusted, High, "A step a review or revision planned after the run read content from outside (a web page, a browser page) is rated " +
		"one level higher than its own rule says: such content may have been written to steer the model, so in auto mode a sandboxed " +
		"shell step asks too, and the approval card names the content."},
}

// Rules returns the risk policy, one row per rule, in the order the UI
// should list them.
func Rules() []Rule { return slices.Clone(rules) }

// RuleByID returns the rule with the given id.
func RuleByID(id string) (Rule, bool) {
	for _, r := range rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// Risk assesses a step from its tool and args alone, never from what a model
// says about it. sandboxed is true when bubblewrap is usable. A web step is
// assessed as reaching a host nobody allowed; RiskAllowing knows the run's
// allowed hosts.
func Risk(tool string, args json.RawMessage, sandboxed bool) Assessment {
	return RiskAllowing(tool, args, sandboxed, nil)
}

// RiskAllowing is Risk for a run whose allowed hosts (its own and
// Settings') are allowed.
func RiskAllowing(tool string, args json.RawMessage, sandboxed bool, allowed []string) Assessment {
	switch tool {
	case ToolWebFetch, ToolBrowser:
		a := webRisk(tool, args, allowed)
		if tool == ToolWebFetch && !sandboxed {
			return unsandboxedFetch(a)
		}
		return a
	case ToolFileRead:
		return Assessment{Level: Low, Rule: RuleReadOnly, Why: "it reads a file in the workspace"}
	case ToolWorldSim:
		return Assessment{Level: Low, Rule: RuleSimulation, Why: "it runs a simulated world"}
	case ToolWorldSearch:
		return Assessment{Level: Low, Rule: RuleSimulation, Why: "it searches forks of a simulated world"}
	case ToolFileWrite:
		return Assessment{Level: Medium, Rule: RuleFileWrite, Why: "it writes a file in the workspace"}
	case ToolCoder:
		return Assessment{Level: High, Rule: RuleGeneratedCode, Why: "it runs a script a model wrote", Shell: true}
	case ToolShell:
		return shellRisk(args, sandboxed)
	}
	return Assessment{Level: High, Rule: RuleUnknownTool, Why: fmt.Sprintf("tool %q is not one the risk policy knows", tool)}
}

// MCPRisk assesses a call to an MCP server's tool from what the user said
// of the server and the tool; the server's own hints never lower it.
func MCPRisk(m backend.MCPTool) Assessment {
	switch {
	case m.Safe:
		return Assessment{Level: Low, Rule: RuleMCPSafe, Why: fmt.Sprintf("you marked tool %s of MCP server %s safe", m.Tool, m.Server), Network: m.Network}
	case m.Network:
		return Assessment{Level: High, Rule: RuleMCPNetwork, Why: fmt.Sprintf("it calls tool %s of MCP server %s, which reaches the network", m.Tool, m.Server), Network: true}
	}
	return Assessment{Level: Medium, Rule: RuleMCP, Why: fmt.Sprintf("it calls tool %s of MCP server %s", m.Tool, m.Server)}
}

func shellRisk(args json.RawMessage, sandboxed bool) Assessment {
	var a struct {
		Command string `json:"command"`
	}
	if err := json.Unmarshal(args, &a); err != nil || strings.TrimSpace(a.Command) == "" {
		return Assessment{Level: High, Rule: RuleUnreadableArgs, Why: "its args hold no readable command", Shell: true}
	}
	f := scan(a.Command)
	var parts []string
	if len(f.destructive) > 0 {
		parts = append(parts, "can destroy data ("+strings.Join(f.destructive, ", ")+")")
	}
	if len(f.privilege) > 0 {
		parts = append(parts, "asks for more privilege ("+strings.Join(f.privilege, ", ")+")")
	}
	if len(f.network) > 0 {
		parts = append(parts, "reaches the network ("+strings.Join(f.network, ", ")+")")
	}
	out := Assessment{Level: High, Network: len(f.network) > 0, Shell: true}
	switch {
	case len(f.destructive) > 0:
		out.Rule = RuleDestructive
	case len(f.privilege) > 0:
		out.Rule = RulePrivilege
	case len(f.network) > 0:
		out.Rule = RuleNetwork
	case sandboxed:
		return Assessment{Level: Medium, Rule: RuleShellSandboxed, Why: "the command runs in the sandbox", Shell: true}
	default:
		return Assessment{Level: High, Rule: RuleShellUnsandboxed, Why: "the command would run without a sandbox", Shell: true}
	}
	if !sandboxed {
		parts = append(parts, "would run without a sandbox")
	}
	out.Why = "the command " + joinClauses(parts)
	return out
}

// joinClauses joins clauses as English: "a", "a and b", "a, b and c".
func joinClauses(p []string) string {
	if len(p) <= 1 {
		return strings.Join(p, "")
	}
	return strings.Join(p[:len(p)-1], ", ") + " and " + p[len(p)-1]
}
