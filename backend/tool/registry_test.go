package tool_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/taskgraph"
	"ducklm/backend/tool"
)

// The planner validates plans against the registry.
var (
	_ taskgraph.Catalog    = (*tool.Registry)(nil)
	_ taskgraph.ToolLister = (*tool.Registry)(nil)
)

func registry() *tool.Registry {
	return tool.NewRegistry(&tool.Shell{}, &tool.FileWrite{}, &tool.FileRead{})
}

func TestRegistryListsToolsByName(t *testing.T) {
	t.Parallel()
	r := registry()
	var names []string
	for _, tl := range r.List() {
		names = append(names, tl.Name())
	}
	require.Equal(t, []string{"file_read", "file_write", "shell_exec"}, names)
	require.Equal(t, names, r.ToolNames())

	got, err := r.Get("shell_exec")
	require.NoError(t, err)
	require.Equal(t, "shell_exec", got.Name())
	_, err = r.Get("rm_rf")
	require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err))
	_, ok := r.ArgsSchema("rm_rf")
	require.False(t, ok)

	require.Panics(t, func() { tool.NewRegistry(&tool.FileRead{}, &tool.FileRead{}) })
}

func TestCatalogDescribesEveryTool(t *testing.T) {
	t.Parallel()
	raw, err := json.Marshal(registry().Catalog())
	require.NoError(t, err)
	var entries []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &entries))
	require.Len(t, entries, 3)
	for _, e := range entries {
		var name string
		require.NoError(t, json.Unmarshal(e["name"], &name))
		want := []string{"name", "description", "args_schema"}
		if name == "file_read" || name == "web_fetch" {
			// Their reads are safe to repeat (backend.Repeatable).
			want = append(want, "repeatable")
			require.JSONEq(t, "true", string(e["repeatable"]))
		}
		require.ElementsMatch(t, want, keys(e), name)
		var desc string
		require.NoError(t, json.Unmarshal(e["description"], &desc))
		require.Greater(t, len(desc), 100)
		var schema map[string]any
		require.NoError(t, json.Unmarshal(e["args_schema"], &schema))
		require.Equal(t, "https://json-schema.org/draft/2020-12/schema", schema["$schema"])
		require.Equal(t, false, schema["additionalProperties"])
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Each schema compiles as draft 2020-12 and accepts and refuses what the
// tool itself accepts and refuses.
func TestArgsSchemasMatchTheTools(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ valid, invalid []string }{
		"shell_exec": {
			valid:   []string{`{"command":"ls"}`, `{"command":"ls","timeout_seconds":5}`},
			invalid: []string{`{}`, `{"command":""}`, `{"command":"ls","x":1}`, `{"command":"ls","timeout_seconds":0}`},
		},
		"file_read": {
			valid:   []string{`{"path":"a"}`, `{"path":"a","max_bytes":10}`},
			invalid: []string{`{}`, `{"path":""}`, `{"path":"a","max_bytes":-1}`, `{"path":"a","offset":1}`},
		},
		"file_write": {
			valid:   []string{`{"path":"a","content":""}`, `{"path":"a","content":"x","append":true}`},
			invalid: []string{`{"path":"a"}`, `{"content":"x"}`, `{"path":"a","content":"x","mode":1}`},
		},
	}
	r := registry()
	for name, c := range cases {
		raw, ok := r.ArgsSchema(name)
		require.True(t, ok)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		require.NoError(t, err)
		comp := jsonschema.NewCompiler()
		comp.DefaultDraft(jsonschema.Draft2020)
		require.NoError(t, comp.AddResource("urn:test:"+name, doc))
		sch, err := comp.Compile("urn:test:" + name)
		require.NoError(t, err, name)
		for _, v := range c.valid {
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(v)))
			require.NoError(t, err)
			require.NoError(t, sch.Validate(inst), "%s %s", name, v)
		}
		for _, v := range c.invalid {
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(v)))
			require.NoError(t, err)
			require.Error(t, sch.Validate(inst), "%s %s", name, v)
		}
	}
}

// TestOnlyReadsAreRepeatable: a call that only reads is safe to repeat (a
// crash re-runs it); a write, a command or a POST never is.
func TestOnlyReadsAreRepeatable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		tool backend.Tool
		args string
		want bool
	}{
		{&tool.FileRead{}, `{"path":"a.txt"}`, true},
		{&tool.WebFetch{}, `{"url":"https://example.org/"}`, true},
		{&tool.WebFetch{}, `{"url":"https://example.org/","method":"get"}`, true},
		{&tool.WebFetch{}, `{"url":"https://example.org/","method":"POST","body":"x"}`, false},
		{&tool.WebFetch{}, `not json`, false},
		{&tool.FileWrite{}, `{"path":"a.txt","content":"x"}`, false},
		{&tool.Shell{}, `{"command":"cat a.txt"}`, false},
	} {
		require.Equal(t, c.want, backend.IsRepeatable(c.tool, json.RawMessage(c.args)), "%s %s", c.tool.Name(), c.args)
	}
}
