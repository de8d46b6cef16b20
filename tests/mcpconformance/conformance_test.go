// Package mcpconformance_test runs the server scenarios of the MCP
// conformance suite (@modelcontextprotocol/conformance, installed with npm
// ci from this folder's lock file) against the /mcp endpoint of a real
// `ducklm serve` on loopback, reached by its URL alone (the token in the
// path), as the suite connects.
//
// A scenario runs when ducklm declares what it tests; one that tests a
// feature ducklm does not declare is skipped, and the reason is read off
// ducklm's own initialize answer and lists, not written down: the day
// ducklm declares logging, or lists a tool a scenario calls, that scenario
// runs and must pass. A scenario this test does not know fails it, so a
// new suite version cannot pass by adding scenarios nobody looked at.
package mcpconformance_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"ducklm/backend/prereq"
	"ducklm/tests/internal/npmci"
)

// need is what a scenario exercises: a capability ducklm must declare in
// its initialize answer, or a fixture the suite calls by name (a tool, a
// resource or a resource template that only a conformance test server
// defines). The zero need is the transport and lifecycle every server has.
type need struct {
	capability string // tools, resources, resources.subscribe, logging, completions, prompts
	tool       string // a tool the scenario calls, which tools/list must name
	resource   string // a resource the scenario reads, which resources/list must name
	template   string // a resource template the scenario reads, which resources/templates/list must name
}

// scenarios is every server scenario of the suite and what it exercises
// (from the suite's src/scenarios/server/*.ts: the tool, resource and
// prompt names it calls).
var scenarios = map[string]need{
	"server-initialize":             {},
	"ping":                          {},
	"server-sse-multiple-streams":   {},
	"dns-rebinding-protection":      {},
	"logging-set-level":             {capability: "logging"},
	"completion-complete":           {capability: "completions"},
	"tools-list":                    {capability: "tools"},
	"tools-call-simple-text":        {capability: "tools", tool: "test_simple_text"},
	"tools-call-image":              {capability: "tools", tool: "test_image_content"},
	"tools-call-audio":              {capability: "tools", tool: "test_audio_content"},
	"tools-call-embedded-resource":  {capability: "tools", tool: "test_embedded_resource"},
	"tools-call-mixed-content":      {capability: "tools", tool: "test_multiple_content_types"},
	"tools-call-with-logging":       {capability: "logging", tool: "test_tool_with_logging"},
	"tools-call-error":              {capability: "tools", tool: "test_error_handling"},
	"tools-call-with-progress":      {capability: "tools", tool: "test_tool_with_progress"},
	"tools-call-sampling":           {capability: "tools", tool: "test_sampling"},
	"tools-call-elicitation":        {capability: "tools", tool: "test_elicitation"},
	"json-schema-2020-12":           {capability: "tools", tool: "json_schema_2020_12_tool"},
	"elicitation-sep1034-defaults":  {capability: "tools", tool: "test_elicitation_sep1034_defaults"},
	"elicitation-sep1330-enums":     {capability: "tools", tool: "test_elicitation_sep1330_enums"},
	"server-sse-polling":            {capability: "tools", tool: "test_reconnection"},
	"resources-list":                {capability: "resources"},
	"resources-read-text":           {capability: "resources", resource: "test://static-text"},
	"resources-read-binary":         {capability: "resources", resource: "test://static-binary"},
	"resources-templates-read":      {capability: "resources", template: "test://template/{id}/data"},
	"resources-subscribe":           {capability: "resources.subscribe"},
	"resources-unsubscribe":         {capability: "resources.subscribe"},
	"prompts-list":                  {capability: "prompts"},
	"prompts-get-simple":            {capability: "prompts"},
	"prompts-get-with-args":         {capability: "prompts"},
	"prompts-get-embedded-resource": {capability: "prompts"},
	"prompts-get-with-image":        {capability: "prompts"},
}

// declared is what ducklm's endpoint says it offers.
type declared struct {
	capabilities map[string]bool
	tools        []string
	resources    []string
	templates    []string
}

// skipReason is why a scenario with need n does not apply to a server that
// declares d, or "" when it applies.
func skipReason(n need, d declared) string {
	if n.capability != "" && !d.capabilities[n.capability] {
		return fmt.Sprintf("ducklm does not declare the %q capability in its initialize answer", n.capability)
	}
	if n.tool != "" && !slices.Contains(d.tools, n.tool) {
		return fmt.Sprintf("the scenario calls the fixture tool %q, which ducklm does not list (its tools: %s)", n.tool, strings.Join(d.tools, ", "))
	}
	if n.resource != "" && !slices.Contains(d.resources, n.resource) {
		return fmt.Sprintf("the scenario reads the fixture resource %q, which ducklm does not list", n.resource)
	}
	if n.template != "" && !slices.Contains(d.templates, n.template) {
		return fmt.Sprintf("the scenario reads the fixture template %q, which ducklm does not list (its templates: %s)", n.template, strings.Join(d.templates, ", "))
	}
	return ""
}

// TestSkipReasonFollowsWhatTheServerDeclares: a scenario is skipped only
// for a capability or fixture the server lacks, and runs once it has it.
func TestSkipReasonFollowsWhatTheServerDeclares(t *testing.T) {
	d := declared{capabilities: map[string]bool{"tools": true, "resources": true}, tools: []string{"submit_task"},
		templates: []string{"ducklm://run/{id}"}}
	require.Empty(t, skipReason(need{}, d))
	require.Empty(t, skipReason(scenarios["tools-list"], d))
	require.Empty(t, skipReason(scenarios["resources-list"], d))
	require.Contains(t, skipReason(scenarios["logging-set-level"], d), `does not declare the "logging" capability`)
	require.Contains(t, skipReason(scenarios["resources-subscribe"], d), `"resources.subscribe"`)
	require.Contains(t, skipReason(scenarios["tools-call-simple-text"], d), `fixture tool "test_simple_text", which ducklm does not list (its tools: submit_task)`)
	require.Contains(t, skipReason(scenarios["resources-read-text"], d), `fixture resource "test://static-text"`)
	require.Contains(t, skipReason(scenarios["resources-templates-read"], d), `fixture template "test://template/{id}/data"`)

	d.capabilities["logging"] = true
	d.tools = append(d.tools, "test_simple_text")
	require.Empty(t, skipReason(scenarios["logging-set-level"], d))
	require.Empty(t, skipReason(scenarios["tools-call-simple-text"], d))
}

// TestDucklmServePassesTheMCPConformanceServerScenarios: every scenario of
// the suite either passes against `ducklm serve`'s /mcp endpoint (the token
// in its path; Host and Origin checked; loopback only) with no failed
// check, or tests a feature ducklm does not declare and is skipped saying
// which.
func TestDucklmServePassesTheMCPConformanceServerScenarios(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		prereq.Missing(t, "node is missing: the MCP conformance suite runs on it (make deps installs it)")
	}
	npmCI(t)
	suite, err := filepath.Abs("node_modules/@modelcontextprotocol/conformance/dist/index.js")
	require.NoError(t, err)
	url := serve(t)

	// What the suite can run, as its own list says.
	out, err := exec.Command(node, suite, "list", "--server").CombinedOutput()
	require.NoError(t, err, "conformance list:\n%s", out)
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^\s+- (\S+)$`).FindAllStringSubmatch(string(out), -1) {
		listed = append(listed, m[1])
	}
	require.NotEmpty(t, listed, "conformance list printed no server scenario:\n%s", out)
	for _, s := range listed {
		_, known := scenarios[s]
		require.True(t, known, "the conformance suite has a server scenario %q this test does not know: say what it exercises in scenarios", s)
	}

	d := declaredBy(t, url)
	var ran, skipped []string
	for _, s := range listed {
		t.Run(s, func(t *testing.T) {
			if why := skipReason(scenarios[s], d); why != "" {
				skipped = append(skipped, s)
				t.Skip(why)
			}
			ran = append(ran, s)
			runScenario(t, node, suite, url, s)
		})
	}
	t.Logf("%d of %d server scenarios ran and passed; %d skipped for what ducklm does not declare", len(ran), len(listed), len(skipped))
	// ducklm declares tools and resources: the scenarios of its transport,
	// lifecycle and those two features are never all skipped.
	for _, s := range []string{"server-initialize", "ping", "tools-list", "resources-list", "dns-rebinding-protection", "server-sse-multiple-streams"} {
		require.Contains(t, ran, s)
	}
}

// check is one entry of a scenario's checks.json.
type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// runScenario runs one scenario against url and fails t on any failed
// check (or a run that exits non-zero).
func runScenario(t *testing.T, node, suite, url, scenario string) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, suite, "server", "--url", url, "--scenario", scenario, "-o", dir)
	out, err := cmd.CombinedOutput()
	printed := strings.ReplaceAll(string(out), url, "<the MCP address>")
	require.NoError(t, err, "conformance server --scenario %s:\n%s", scenario, printed)
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	require.Len(t, files, 1, "conformance server --scenario %s wrote no checks.json:\n%s", scenario, printed)
	data, err := os.ReadFile(files[0])
	require.NoError(t, err)
	var checks []check
	require.NoError(t, json.Unmarshal(data, &checks))
	passed := 0
	for _, c := range checks {
		switch c.Status {
		case "SUCCESS":
			passed++
		case "FAILURE":
			t.Errorf("%s: check %s failed: %s", scenario, c.ID, c.ErrorMessage)
		case "WARNING":
			t.Logf("%s: check %s warns: %s", scenario, c.ID, c.ErrorMessage)
		}
	}
	require.Positive(t, passed, "%s passed no check:\n%s", scenario, printed)
	t.Logf("%s: %d checks passed", scenario, passed)
}

// declaredBy connects to url as an MCP client and reads what the server
// declares: its capabilities, tools, resources and resource templates.
func declaredBy(t *testing.T, url string) declared {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "ducklm-conformance-test", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	require.NoError(t, err)
	defer cs.Close()
	caps := cs.InitializeResult().Capabilities
	d := declared{capabilities: map[string]bool{
		"tools":               caps.Tools != nil,
		"resources":           caps.Resources != nil,
		"resources.subscribe": caps.Resources != nil && caps.Resources.Subscribe,
		"logging":             caps.Logging != nil,
		"completions":         caps.Completions != nil,
		"prompts":             caps.Prompts != nil,
	}}
	if caps.Tools != nil {
		for tool, err := range cs.Tools(ctx, nil) {
			require.NoError(t, err)
			d.tools = append(d.tools, tool.Name)
		}
	}
	if caps.Resources != nil {
		for r, err := range cs.Resources(ctx, nil) {
			require.NoError(t, err)
			d.resources = append(d.resources, r.URI)
		}
		for r, err := range cs.ResourceTemplates(ctx, nil) {
			require.NoError(t, err)
			d.templates = append(d.templates, r.URITemplate)
		}
	}
	t.Logf("ducklm declares %v; tools %v; resources %v; templates %v", d.capabilities, d.tools, d.resources, d.templates)
	return d
}

// serve starts `ducklm serve` on loopback with a fresh data directory and
// returns the MCP address it printed (the token in its path).
func serve(t *testing.T) string {
	t.Helper()
	bin := ducklmBin(t)
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "DUCKLM_HOME="+t.TempDir(), "OLLAMA_HOST=127.0.0.1:1")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = io.Discard
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "MCP endpoint (streamable HTTP): "); ok {
				found <- u
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case u := <-found:
		require.Regexp(t, `^http://127\.0\.0\.1:\d+/mcp/[0-9a-f]{32}$`, u)
		return u
	case <-time.After(time.Minute):
		t.Fatal("ducklm serve printed no MCP endpoint within a minute")
		return ""
	}
}

// ducklmBin is $DUCKLM_BIN, or the ducklm binary built from this checkout
// (its frontend must be built: `ducklm serve` refuses to start without it).
func ducklmBin(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("DUCKLM_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "ducklm")
	build := exec.Command("go", "build", "-tags", "webkit2_41", "-o", bin, ".")
	build.Dir = "../.."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build ducklm:\n%s", out)
	return bin
}

// npmCI installs the suite from the lock file when it changed since the
// last install (make's test targets run it first; this covers `go test`
// run by hand).
func npmCI(t *testing.T) {
	t.Helper()
	npmci.Install(t, ".", "the conformance suite")
}
