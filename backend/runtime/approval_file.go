package runtime

import (
	"context"
	"encoding/json"

	"ducklm/backend"
	"ducklm/backend/tool"
)

// CurrentFileBytes is the most of a file's current content an approval
// card carries: enough to diff a config or a script, not a whole log.
const CurrentFileBytes = 64 << 10

// CurrentFile is what the file a file_write step would write holds now, so
// the approval card can show the change and not only the new content.
type CurrentFile struct {
	// Exists is false when the write would create the file.
	Exists bool `json:"exists"`
	// Content is the file's text (its first CurrentFileBytes), "" when it is
	// not text.
	Content   string `json:"content,omitempty"`
	Bytes     int64  `json:"bytes"`
	Truncated bool   `json:"truncated,omitempty"`
	Binary    bool   `json:"binary,omitempty"`
	// Error says why the file could not be read (the write may fail the
	// same way).
	Error string `json:"error,omitempty"`
}

// currentFile reads, through the file_read tool and so with its workspace
// confinement, the file a file_write step names; nil for any other tool or
// arguments without a path.
func (c *Controller) currentFile(ctx context.Context, st *RunState, toolName string, args json.RawMessage) *CurrentFile {
	if toolName != "file_write" {
		return nil
	}
	var a struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(args, &a) != nil || a.Path == "" {
		return nil
	}
	ws, wsID, err := c.stepWorkspace(st)
	if err != nil {
		return &CurrentFile{Error: backend.ErrorMessage(err)}
	}
	readArgs, _ := json.Marshal(map[string]any{"path": a.Path, "max_bytes": CurrentFileBytes})
	res, err := (&tool.FileRead{}).Run(ctx, backend.ToolCall{RunID: st.RunID, Tool: "file_read", Args: readArgs, Workspace: ws, WorkspaceID: wsID,
		Limits: backend.Limits{OutputBytes: CurrentFileBytes}})
	if backend.ErrorCode(err) == backend.ENOTFOUND {
		return &CurrentFile{}
	}
	if err != nil {
		return &CurrentFile{Error: backend.ErrorMessage(err)}
	}
	var out struct {
		Bytes     int64  `json:"bytes"`
		Content   string `json:"content"`
		Encoding  string `json:"encoding"`
		Truncated bool   `json:"truncated"`
	}
	if err := json.Unmarshal(res.Output, &out); err != nil {
		return &CurrentFile{Error: "the file could not be read"}
	}
	f := &CurrentFile{Exists: true, Bytes: out.Bytes, Truncated: out.Truncated}
	if out.Encoding == "utf-8" {
		f.Content = out.Content
	} else {
		f.Binary = true
	}
	return f
}
