package mcpclient

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"ducklm/backend"
)

// output is an MCP step's ToolResult.Output: what the server answered,
// its large parts and images as blobs.
type output struct {
	Server  string    `json:"server"`
	Tool    string    `json:"tool"`
	IsError bool      `json:"isError,omitempty"`
	Content []content `json:"content,omitempty"`
	// Structured is the server's structuredContent (Blob when large).
	Structured json.RawMessage `json:"structured,omitempty"`
	Error      string          `json:"error,omitempty"`
}

// content is one item of an answer.
type content struct {
	Type     string           `json:"type"` // text, image, audio, resource, resource_link
	Text     string           `json:"text,omitempty"`
	MIMEType string           `json:"mimeType,omitempty"`
	URI      string           `json:"uri,omitempty"`
	Blob     *backend.BlobRef `json:"blob,omitempty"`
	Bytes    int              `json:"bytes,omitempty"`
	// Clipped: Text is the start of a longer text, whole in Blob.
	Clipped bool `json:"clipped,omitempty"`
}

// inlineText is how much of a text an Output item carries; the whole text
// is a blob beyond it.
const inlineText = 16 << 10

// result turns an answer into a step's result: the texts on stdout (or on
// stderr for an isError answer, which fails the step), images, audio and
// binary resources as blobs with their MIME types.
func (m *Manager) result(ctx context.Context, server, tool string, res *mcp.CallToolResult, lim backend.Limits) (backend.ToolResult, error) {
	out := output{Server: server, Tool: tool, IsError: res.IsError}
	var text strings.Builder
	put := func(data []byte, mime string) (*backend.BlobRef, error) {
		if m.o.Blobs == nil {
			return nil, nil
		}
		ref, err := m.o.Blobs.Put(context.WithoutCancel(ctx), data, mime)
		if err != nil {
			return nil, backend.Wrap(err, backend.EINTERNAL, "the answer of MCP server %s could not be stored", server)
		}
		return &ref, nil
	}
	addText := func(kind, s, uri, mime string) error {
		if text.Len() > 0 {
			text.WriteString("\n")
		}
		text.WriteString(s)
		c := content{Type: kind, Text: s, URI: uri, MIMEType: mime}
		if len(s) > inlineText {
			ref, err := put([]byte(s), "text/plain; charset=utf-8")
			if err != nil {
				return err
			}
			c.Text, c.Clipped, c.Blob, c.Bytes = clip(s, inlineText), true, ref, len(s)
		}
		out.Content = append(out.Content, c)
		return nil
	}
	for _, item := range res.Content {
		var err error
		switch v := item.(type) {
		case *mcp.TextContent:
			err = addText("text", v.Text, "", "")
		case *mcp.ImageContent:
			c := content{Type: "image", MIMEType: mimeOr(v.MIMEType, "image/png"), Bytes: len(v.Data)}
			c.Blob, err = put(v.Data, c.MIMEType)
			out.Content = append(out.Content, c)
		case *mcp.AudioContent:
			c := content{Type: "audio", MIMEType: mimeOr(v.MIMEType, "application/octet-stream"), Bytes: len(v.Data)}
			c.Blob, err = put(v.Data, c.MIMEType)
			out.Content = append(out.Content, c)
		case *mcp.EmbeddedResource:
			if v.Resource == nil {
				continue
			}
			r := v.Resource
			if r.Blob != nil {
				c := content{Type: "resource", URI: r.URI, MIMEType: mimeOr(r.MIMEType, "application/octet-stream"), Bytes: len(r.Blob)}
				c.Blob, err = put(r.Blob, c.MIMEType)
				out.Content = append(out.Content, c)
			} else {
				err = addText("resource", r.Text, r.URI, r.MIMEType)
			}
		case *mcp.ResourceLink:
			out.Content = append(out.Content, content{Type: "resource_link", URI: v.URI, Text: v.Name, MIMEType: v.MIMEType})
		}
		if err != nil {
			return backend.ToolResult{}, err
		}
	}
	if res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err == nil && len(raw) <= inlineText {
			out.Structured = raw
		} else if err == nil {
			ref, perr := put(raw, "application/json")
			if perr != nil {
				return backend.ToolResult{}, perr
			}
			out.Structured = mustJSON(map[string]any{"blob": ref, "bytes": len(raw)})
		}
		if text.Len() == 0 && err == nil {
			text.Write(raw)
		}
	}
	body := text.String()
	var r backend.ToolResult
	if int64(len(body)) > lim.OutputBytes {
		body, r.Truncated = clip(body, int(lim.OutputBytes)), true
	}
	if body != "" && !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	if res.IsError {
		r.ExitCode = 1
		if strings.TrimSpace(body) == "" {
			body = "MCP server " + server + " said the call to " + tool + " failed, without a message.\n"
		}
		r.Stderr = []byte(body)
	} else {
		r.Stdout = []byte(body)
	}
	r.Output = mustJSON(out)
	return r, nil
}

func mimeOr(m, def string) string {
	if strings.TrimSpace(m) == "" {
		return def
	}
	return m
}

// clip cuts s to at most n bytes without splitting a character.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
