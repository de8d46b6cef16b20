package mcp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"ducklm/backend"
	"ducklm/backend/api"
	"ducklm/backend/service"
)

// The transports a server is reached over, as its calls record them.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// instructions tell the client's model what ducklm is and what it may not do.
const instructions = "ducklm runs tasks as durable, sandboxed, recorded runs on this machine, and runs, forks and " +
	"deliberates over simulated worlds written in Starlark. submit_task starts a run and returns its id at once; " +
	"follow it with run_status, run_events and run_answer. A run may wait for the person at ducklm's window or " +
	"command line to approve a step: no tool approves or denies, so tell the person what is waiting. Every call " +
	"is recorded on ducklm's ledger with the name of your client."

// Options configure a Server.
type Options struct {
	// API is the facade the window calls; configure it (api.Configure)
	// with the lifetime of the process, not of a call: runs outlive calls.
	API *api.API
	// Service supplies the ledger calls are recorded on and the progress
	// of deliberations.
	Service *service.Service
	// Transport is TransportStdio or TransportHTTP, as calls record it.
	Transport string
	Log       *slog.Logger
}

// Server is ducklm's MCP server: its tools, resources and call record.
type Server struct {
	api       *api.API
	svc       *service.Service
	transport string
	log       *slog.Logger
	sdk       *sdk.Server
	// stream is this server's ledger stream (KindMCP): every call it
	// answered, in order.
	stream string
}

// New returns the server for opts.
func New(opts Options) (*Server, error) {
	if opts.API == nil || opts.Service == nil {
		return nil, errors.New("mcp: an API and its service are required")
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{api: opts.API, svc: opts.Service, transport: opts.Transport, log: log,
		stream: backend.NewID(backend.KindMCP)}
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: "ducklm", Title: "ducklm", Version: backend.Version},
		&sdk.ServerOptions{Instructions: instructions, Logger: log,
			// No logging capability: ducklm's log is its own.
			Capabilities: &sdk.ServerCapabilities{}})
	s.addTools()
	s.addResources()
	s.sdk.AddReceivingMiddleware(s.recordCalls)
	return s, nil
}

// Stream is the ledger stream this server records its calls on.
func (s *Server) Stream() string { return s.stream }

// SDK returns the underlying SDK server (for tests that connect to it in
// memory).
func (s *Server) SDK() *sdk.Server { return s.sdk }

// ServeStdio answers one client over in and out (a process's stdin and
// stdout) until the client closes its end or ctx ends.
func (s *Server) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	err := s.sdk.Run(ctx, &sdk.IOTransport{Reader: in, Writer: out})
	if err != nil && (errors.Is(err, io.EOF) || ctx.Err() != nil) {
		return nil
	}
	return err
}

// sessionTimeout closes an HTTP session its client left without closing.
const sessionTimeout = 30 * time.Minute

// HTTPHandler is the streamable HTTP endpoint. It checks no token and no
// origin itself: it is mounted behind `ducklm serve`'s (backend/httpapi).
func (s *Server) HTTPHandler() http.Handler {
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk },
		&sdk.StreamableHTTPOptions{SessionTimeout: sessionTimeout, Logger: s.log})
}

// Close ends every session of the server, so that a shutting-down `ducklm
// serve` does not wait for the streams its clients hold open. Register it
// with http.Server.RegisterOnShutdown.
func (s *Server) Close() {
	for ss := range s.sdk.Sessions() {
		ss.Close()
	}
}
