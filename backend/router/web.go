package router

import (
	"encoding/json"
	"fmt"

	"ducklm/backend/webhost"
)

// webRisk assesses a web_fetch or browser step by the host its URL names,
// never by what a model says of it: a host allowed for the run (or in
// Settings) runs without asking; any other host asks; a host that names
// this machine or a private network asks under its own rule, because
// approving it is also approving its private address.
func webRisk(tool string, args json.RawMessage, allowed []string) Assessment {
	var a struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(args, &a); err != nil || a.URL == "" {
		return Assessment{Level: High, Rule: RuleUnreadableArgs, Why: "its args hold no readable URL", Network: true}
	}
	_, host, err := webhost.ParseURL(a.URL)
	if err != nil {
		return Assessment{Level: High, Rule: RuleUnreadableArgs, Why: "its URL cannot be used (" + err.Error() + ")", Network: true}
	}
	grant := AllowedGrant(allowed)
	if grant.Allows(host) {
		if _, local := webhost.LocalHost(host); !local || grant.AllowsPrivate(host) {
			return Assessment{Level: Low, Rule: RuleWebAllowed, Why: fmt.Sprintf("it reaches %s, a host allowed for this run", host), Network: true}
		}
	}
	if kind, local := webhost.LocalHost(host); local {
		return Assessment{Level: High, Rule: RuleWebPrivate,
			Why: fmt.Sprintf("it reaches %s, a %s address (this machine or your network), which needs its own approval", host, kind), Network: true}
	}
	return Assessment{Level: High, Rule: RuleWebNewHost, Why: fmt.Sprintf("it reaches %s, a host not allowed for this run yet", host), Network: true}
}

// unsandboxedFetch is a fetch's risk a without bubblewrap: its worker runs
// with the user's rights, so it runs a process as a shell step does (see
// Assessment.Shell) and is high risk; an allowed host's low risk becomes
// its own rule.
func unsandboxedFetch(a Assessment) Assessment {
	a.Shell = true
	if a.Level < High {
		a.Level, a.Rule = High, RuleWebUnsandboxed
	}
	a.Why += ", and the page would be fetched and read without a sandbox"
	return a
}

// AllowedGrant is what an allow-list (the run's and Settings') grants: each
// host, and the private address of each that names one by itself.
func AllowedGrant(allowed []string) webhost.Grant {
	var g webhost.Grant
	for _, h := range allowed {
		g = g.Add(h)
	}
	return g
}

// WebGrant is what a web step may reach when it runs: the hosts allowed
// for the run, and the host its URL names when the user approved the step
// (the approval of a URL naming a private address approves that address).
// Any other tool gets nothing.
func WebGrant(tool string, args json.RawMessage, approved bool, allowed []string) webhost.Grant {
	if tool != ToolWebFetch && tool != ToolBrowser {
		return webhost.Grant{}
	}
	g := AllowedGrant(allowed)
	if !approved {
		return g
	}
	var a struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(args, &a) != nil {
		return g
	}
	if _, host, err := webhost.ParseURL(a.URL); err == nil {
		g = g.Add(host)
	}
	return g
}

// WebHost is the host a web step's URL names, "" when it names none.
func WebHost(args json.RawMessage) string {
	var a struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(args, &a) != nil {
		return ""
	}
	_, host, err := webhost.ParseURL(a.URL)
	if err != nil {
		return ""
	}
	return host
}

// OutsideContent says what content from outside the run a finished step of
// tool with args read ("the web page https://…"), and whether it read any:
// web_fetch and browser pages. A step planned after such content is rated
// one risk level higher (RuleAfterUntrusted), because a page can be written
// to steer the model that reads it.
func OutsideContent(tool string, args json.RawMessage) (string, bool) {
	what := ""
	switch tool {
	case ToolWebFetch:
		what = "the web page"
	case ToolBrowser:
		what = "the browser page"
	default:
		return "", false
	}
	var a struct {
		URL any `json:"url"`
	}
	_ = json.Unmarshal(args, &a)
	if u, ok := a.URL.(string); ok && u != "" {
		return what + " " + u, true
	}
	return what + " an earlier step named", true
}
