package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"ducklm/backend"
)

// The resources' URI templates.
const (
	RunURI   = "ducklm://run/{id}"
	WorldURI = "ducklm://world/{id}"
)

func (s *Server) addResources() {
	s.sdk.AddResourceTemplate(&sdk.ResourceTemplate{Name: "run", Title: "A ducklm run", URITemplate: RunURI, MIMEType: "application/json",
		Description: "A task run's status, answer and waiting approvals (as run_status), or a simulated world's run (as world_detail)."}, s.readRun)
	s.sdk.AddResourceTemplate(&sdk.ResourceTemplate{Name: "world", Title: "A ducklm world", URITemplate: WorldURI, MIMEType: "application/json",
		Description: "A simulated world with its latest run: spec, runs, checkpoints, state, program, fork provenance (as world_detail)."}, s.readWorld)
}

// readRun answers ducklm://run/ID: a task run's status, or a simulated
// run's world detail.
func (s *Server) readRun(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	id, ok := strings.CutPrefix(uri, "ducklm://run/")
	if !ok || backend.CheckID(id, backend.KindRun) != nil {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	d, err := s.detail(id)
	if err != nil {
		return nil, s.readFailure(uri, err)
	}
	if d.World.Domain == backend.DomainSimulated {
		return jsonResource(uri, WorldDetail{WorldID: d.World.ID, RunID: d.Run.ID, Detail: asValue(d)})
	}
	st, err := s.status(id)
	if err != nil {
		return nil, s.readFailure(uri, err)
	}
	return jsonResource(uri, st)
}

// readWorld answers ducklm://world/ID.
func (s *Server) readWorld(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	id, ok := strings.CutPrefix(uri, "ducklm://world/")
	if !ok || backend.CheckID(id, backend.KindWorld) != nil {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	d, err := s.detail(id)
	if err != nil {
		return nil, s.readFailure(uri, err)
	}
	return jsonResource(uri, WorldDetail{WorldID: d.World.ID, RunID: d.Run.ID, Detail: asValue(d)})
}

// readFailure is "not found" for an id ducklm does not hold, and the
// sentence otherwise. The facade's errors are sentences without their
// code, so its "there is no …" is recognised by its words.
func (s *Server) readFailure(uri string, err error) error {
	if backend.ErrorCode(err) == backend.ENOTFOUND || strings.HasPrefix(err.Error(), "there is no ") {
		return sdk.ResourceNotFoundError(uri)
	}
	return errors.New(message(err))
}

func jsonResource(uri string, v any) (*sdk.ReadResourceResult, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}
