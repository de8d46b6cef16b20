package api

import (
	"encoding/json"
	"strings"

	"ducklm/backend"
	"ducklm/backend/mcpclient"
	"ducklm/backend/settings"
)

// MCPServerInput is an MCP server to add, as Settings → Tools sends it: a
// command and its arguments (started in the sandbox), or a URL.
type MCPServerInput struct {
	Name    string   `json:"name"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
	URL     string   `json:"url"`
	// Network lets a command's server reach the network; Workspace lets it
	// write the run's workspace instead of a folder of its own; Private
	// approves a URL server's private or loopback addresses.
	Network   bool `json:"network"`
	Workspace bool `json:"workspace"`
	Private   bool `json:"private"`
}

// MCPServers lists the MCP servers, how each stands and its tools; it
// starts those not running.
func (a *API) MCPServers() ([]mcpclient.ServerStatus, error) {
	if err := a.ready(); err != nil {
		return nil, err
	}
	all, err := a.svc.MCP.Servers(a.ctx())
	return all, a.fail("mcp servers", err)
}

// AddMCPServer checks and stores a server, then starts it and lists its
// tools; a server that cannot start is kept, its status saying why.
func (a *API) AddMCPServer(in MCPServerInput) (mcpclient.ServerStatus, error) {
	if err := a.ready(); err != nil {
		return mcpclient.ServerStatus{}, err
	}
	st, err := a.svc.MCP.Add(a.ctx(), settings.MCPServer{Name: in.Name, Command: in.Command, Args: in.Args, URL: in.URL,
		Network: in.Network, Workspace: in.Workspace, Private: in.Private})
	return st, a.fail("add mcp server", err)
}

// RemoveMCPServer stops and forgets a server.
func (a *API) RemoveMCPServer(name string) error {
	if err := a.ready(); err != nil {
		return err
	}
	return a.fail("remove mcp server", a.svc.MCP.Remove(a.ctx(), name))
}

// TestMCPServer starts a server afresh and lists its tools; the status
// says why it could not start (the error too).
func (a *API) TestMCPServer(name string) (mcpclient.ServerStatus, error) {
	if err := a.ready(); err != nil {
		return mcpclient.ServerStatus{}, err
	}
	st, err := a.svc.MCP.Test(a.ctx(), name)
	return st, a.fail("test mcp server", err)
}

// MarkMCPToolSafe marks one of a server's tools safe (ask_risky runs its
// calls without asking), or not.
func (a *API) MarkMCPToolSafe(server, tool string, safe bool) (mcpclient.ServerStatus, error) {
	if err := a.ready(); err != nil {
		return mcpclient.ServerStatus{}, err
	}
	st, err := a.svc.MCP.MarkSafe(a.ctx(), server, tool, safe)
	return st, a.fail("mark mcp tool", err)
}

// StepImage returns image number index (from 0, in the order the server
// sent its content) of an MCP step's result, kept as a blob with its MIME
// type, so the run view can show it.
func (a *API) StepImage(runID, stepID string, index int) (Screenshot, error) {
	if err := a.ready(); err != nil {
		return Screenshot{}, err
	}
	ctx := a.ctx()
	st, _, err := a.svc.Runtime.Load(ctx, runID)
	if err != nil {
		return Screenshot{}, a.fail("step image", err)
	}
	none := backend.Errorf(backend.ENOTFOUND, "step %q of run %s has no image %d", stepID, runID, index)
	rec := st.Steps[stepID]
	if rec == nil || rec.Result == nil || !strings.HasPrefix(rec.Node.Tool, "mcp__") || index < 0 {
		return Screenshot{}, a.fail("step image", none)
	}
	var out struct {
		Content []struct {
			Type string           `json:"type"`
			Blob *backend.BlobRef `json:"blob"`
		} `json:"content"`
	}
	_ = json.Unmarshal(rec.Result.Output, &out)
	var images []*backend.BlobRef
	for _, c := range out.Content {
		if c.Type == "image" && c.Blob != nil && strings.HasPrefix(c.Blob.MediaType, "image/") {
			images = append(images, c.Blob)
		}
	}
	if index >= len(images) {
		return Screenshot{}, a.fail("step image", none)
	}
	data, err := a.svc.Blobs.Get(ctx, *images[index])
	if err != nil {
		return Screenshot{}, a.fail("step image", err)
	}
	return Screenshot{MediaType: images[index].MediaType, Data: data}, nil
}
