package router_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/router"
	"ducklm/backend/webhost"
)

func url(u string) json.RawMessage {
	data, _ := json.Marshal(map[string]string{"url": u})
	return data
}

func TestWebRiskKeysOnTheHost(t *testing.T) {
	t.Parallel()
	allowed := []string{"docs.example.org", "*.duck.test", "127.0.0.1"}
	for _, c := range []struct {
		tool, url string
		level     router.Level
		rule, why string
	}{
		{router.ToolWebFetch, "https://docs.example.org/notes", router.Low, router.RuleWebAllowed, "docs.example.org, a host allowed"},
		{router.ToolWebFetch, "https://DOCS.example.org./x", router.Low, router.RuleWebAllowed, ""},
		{router.ToolBrowser, "https://www.duck.test/", router.Low, router.RuleWebAllowed, ""},
		{router.ToolWebFetch, "https://duck.test/", router.High, router.RuleWebNewHost, "duck.test, a host not allowed"},
		{router.ToolWebFetch, "https://example.org/", router.High, router.RuleWebNewHost, ""},
		{router.ToolBrowser, "http://evil.example/", router.High, router.RuleWebNewHost, ""},
		{router.ToolWebFetch, "http://127.0.0.1:8080/", router.Low, router.RuleWebAllowed, ""}, // allowed by its literal
		{router.ToolWebFetch, "http://localhost:3000/", router.High, router.RuleWebPrivate, "a loopback address"},
		{router.ToolWebFetch, "http://192.168.1.1/admin", router.High, router.RuleWebPrivate, "a private address"},
		{router.ToolWebFetch, "http://[::1]/", router.High, router.RuleWebPrivate, ""},
		{router.ToolWebFetch, "http://169.254.169.254/latest", router.High, router.RuleWebPrivate, "link-local"},
		{router.ToolWebFetch, "file:///etc/passwd", router.High, router.RuleUnreadableArgs, "not http or https"},
	} {
		a := router.RiskAllowing(c.tool, url(c.url), true, allowed)
		require.Equal(t, c.level, a.Level, c.url)
		require.Equal(t, c.rule, a.Rule, c.url)
		require.True(t, a.Network, c.url)
		require.Contains(t, a.Why, c.why, c.url)
	}
	// The model's label means nothing: only the URL counts.
	a := router.Risk(router.ToolWebFetch, json.RawMessage(`{"url":"https://example.org/","risk":"low","safe":true}`), true)
	require.Equal(t, router.RuleWebNewHost, a.Rule)
	require.Equal(t, router.RuleUnreadableArgs, router.Risk(router.ToolWebFetch, json.RawMessage(`{}`), true).Rule)
}

func TestRouteAsksForANewHostAndNotForAnAllowedOne(t *testing.T) {
	t.Parallel()
	step := func(u string) router.State {
		return router.State{Phase: router.PhaseExecuting, HasGraph: true, ApprovalMode: router.AutoSandboxed, Sandboxed: true,
			Ready: []router.ReadyStep{{Node: backend.TaskNode{ID: "get", Kind: backend.KindToolStep, Tool: router.ToolWebFetch, Args: url(u)}}}}
	}
	d := router.Route(step("https://news.example/notes"), router.Context{})
	require.Equal(t, backend.DecisionRequestPermission, d.Type)
	var p router.PermissionPayload
	require.NoError(t, json.Unmarshal(d.Payload, &p))
	require.Equal(t, router.RuleWebNewHost, p.Rule)
	require.True(t, p.Network)

	s := step("https://news.example/notes")
	s.AllowedHosts = []string{"news.example"}
	d = router.Route(s, router.Context{})
	require.Equal(t, backend.DecisionTool, d.Type)
	var sp router.StepPayload
	require.NoError(t, json.Unmarshal(d.Payload, &sp))
	require.Equal(t, router.ToolWebFetch, sp.Tool)
	require.True(t, sp.Network)

	// ask_every still asks.
	s.ApprovalMode = router.AskEvery
	require.Equal(t, backend.DecisionRequestPermission, router.Route(s, router.Context{}).Type)
}

func TestWebGrant(t *testing.T) {
	t.Parallel()
	allowed := []string{"docs.example.org", "192.168.1.5"}
	g := router.WebGrant(router.ToolWebFetch, url("https://news.example/a"), false, allowed)
	require.False(t, g.Allows("news.example"), "not approved, not allowed: not granted")
	require.True(t, g.Allows("docs.example.org"))
	require.False(t, g.AllowsPrivate("docs.example.org"), "a name in the allow-list does not approve private answers")
	require.True(t, g.AllowsPrivate("192.168.1.5"), "an address the user wrote is approved as what it is")

	g = router.WebGrant(router.ToolWebFetch, url("https://news.example/a"), true, allowed)
	require.True(t, g.Allows("news.example"))
	require.False(t, g.AllowsPrivate("news.example"))

	g = router.WebGrant(router.ToolBrowser, url("http://127.0.0.1:9000/"), true, nil)
	require.Equal(t, webhost.Grant{Hosts: []string{"127.0.0.1"}, Private: []string{"127.0.0.1"}}, g)

	require.Equal(t, webhost.Grant{}, router.WebGrant(router.ToolShell, cmd("curl x"), true, allowed))
	require.Equal(t, "news.example", router.WebHost(url("https://News.Example:8443/a")))
}

// Without bubblewrap a page is fetched and read by a worker process with
// the user's rights, so web_fetch follows shell_exec's rule for unsandboxed
// runs: high risk, and a person's approval in every mode, an allowed host
// included. With bubblewrap nothing changes.
func TestAnUnsandboxedFetchAlwaysAsks(t *testing.T) {
	t.Parallel()
	allowed := []string{"docs.example.org"}
	a := router.RiskAllowing(router.ToolWebFetch, url("https://docs.example.org/notes"), false, allowed)
	require.Equal(t, router.High, a.Level)
	require.Equal(t, router.RuleWebUnsandboxed, a.Rule)
	require.Contains(t, a.Why, "without a sandbox")
	for _, mode := range []router.ApprovalMode{router.AskEvery, router.AskRisky, router.AutoSandboxed} {
		require.True(t, router.NeedsPermission(mode, a, false), mode)
	}
	newHost := router.RiskAllowing(router.ToolWebFetch, url("https://example.org/"), false, allowed)
	require.Equal(t, router.RuleWebNewHost, newHost.Rule, "the host's rule still names what the step reaches")
	require.Contains(t, newHost.Why, "without a sandbox")
	require.True(t, router.NeedsPermission(router.AskRisky, newHost, false))

	sandboxed := router.RiskAllowing(router.ToolWebFetch, url("https://docs.example.org/notes"), true, allowed)
	require.Equal(t, router.RuleWebAllowed, sandboxed.Rule)
	require.False(t, router.NeedsPermission(router.AutoSandboxed, sandboxed, true))
	_, ok := router.RuleByID(router.RuleWebUnsandboxed)
	require.True(t, ok, "the rule is in the policy's table")
}
