package cli_test

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"ducklm/backend/cli"
	"ducklm/backend/service"
)

// `ducklm mcp serve` answers a client on stdin and stdout, and ends when
// the client closes them; what the client made is in the data directory.
func TestMCPServeAnswersAClientOnStdio(t *testing.T) {
	home(t)
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- cli.Run(cli.Env{Ctx: context.Background(), Stdin: inR, Stdout: outW, Stderr: &stderr}, []string{"mcp", "serve"})
		outW.Close()
	}()
	client := sdk.NewClient(&sdk.Implementation{Name: "cli-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	require.NoError(t, err)
	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 13)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "create_world", Arguments: map[string]any{"example": "branching_grid", "name": "over stdio"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.NoError(t, cs.Close())
	select {
	case c := <-code:
		require.Equal(t, cli.ExitOK, c, stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatal("mcp serve did not end when its client closed stdin")
	}
	require.Contains(t, ok(t, "world", "ls").stdout, "over stdio")
}

// While the window (or ducklm serve) holds the data directory, `ducklm mcp
// serve` says so and where to connect instead.
func TestMCPServeSaysWhereToConnectWhileTheWindowIsOpen(t *testing.T) {
	dir := home(t)
	lock, err := service.AcquireLock(dir)
	require.NoError(t, err)
	defer lock.Release()
	r := ducklm(t, "mcp", "serve")
	require.Equal(t, cli.ExitFail, r.code)
	require.Contains(t, r.stderr, "ducklm is already running on")
	require.Contains(t, r.stderr, "/mcp endpoint")
	require.Empty(t, r.stdout, "stdout is the protocol's")
}
