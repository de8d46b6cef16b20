package api

import (
	"sort"
	"strconv"
	"strings"

	"ducklm/backend"
)

// OpenUsage is the grammar of `ducklm open`.
const OpenUsage = "open [runs|new|worlds|lineage|memory|workers|settings|tools | RUN | WORLD | timeline RUN [SEQ] | compare RUN RUN]"

// OpenRequest is what `ducklm open` asked the window to show: a screen, or a
// run, world or timeline position. Parsing checks only its form; Resolve
// checks that the ids exist.
type OpenRequest struct {
	Screen string `json:"screen"`
	ID     string `json:"id,omitempty"`
	Seq    int64  `json:"seq,omitempty"`
	// Other is the second run of a comparison (Screen "compare").
	Other string `json:"other,omitempty"`
	// Section is a part of the screen to bring into view (Settings' "tools").
	Section string `json:"section,omitempty"`
}

// OpenRoute is a screen of the user interface, in the shape of the
// frontend's Route (frontend/src/lib/route.ts), which turns it into a hash.
type OpenRoute struct {
	Screen string `json:"screen"`
	RunID  string `json:"runId,omitempty"`
	Select string `json:"select,omitempty"`
	Seq    int64  `json:"seq,omitempty"`
	// Compare is the two runs the lineage compares side by side.
	Compare []string `json:"compare,omitempty"`
	// World marks a simulated world's timeline (its section is Worlds).
	World bool `json:"world,omitempty"`
	// Section is a part of the screen to bring into view (Settings' "tools").
	Section string `json:"section,omitempty"`
}

// Opened is the answer to an open request: the route to show, or the
// sentence saying why it cannot be shown (Error set, Route home).
type Opened struct {
	Route OpenRoute `json:"route"`
	Error string    `json:"error,omitempty"`
}

var openScreens = map[string]OpenRequest{
	"runs": {Screen: "home"}, "home": {Screen: "home"}, "new": {Screen: "new"}, "worlds": {Screen: "worlds"},
	"lineage": {Screen: "lineage"}, "memory": {Screen: "memory"}, "workers": {Screen: "workers"}, "settings": {Screen: "settings"},
	// Settings → Tools, the MCP servers.
	"tools": {Screen: "settings", Section: "tools"},
}

// OpenScreens lists the screen names `ducklm open` takes, sorted.
func OpenScreens() []string {
	names := make([]string, 0, len(openScreens))
	for n := range openScreens {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ParseOpen reads the arguments of `ducklm open`. No argument opens the
// window as it is.
func ParseOpen(args []string) (OpenRequest, error) {
	bad := func(format string, a ...any) (OpenRequest, error) {
		return OpenRequest{}, backend.Errorf(backend.EINVALID, format+"; usage: ducklm "+OpenUsage, a...)
	}
	switch {
	case len(args) == 0:
		return OpenRequest{}, nil
	case args[0] == "timeline":
		if len(args) < 2 || len(args) > 3 {
			return bad("timeline takes a run id and, optionally, a seq")
		}
		if kind, err := backend.KindOf(args[1]); err != nil || kind != backend.KindRun {
			return bad("%q is not a run id (run_…)", args[1])
		}
		req := OpenRequest{Screen: "timeline", ID: args[1]}
		if len(args) == 3 {
			seq, err := strconv.ParseInt(args[2], 10, 64)
			if err != nil || seq < 1 {
				return bad("%q is not a seq (a whole number from 1)", args[2])
			}
			req.Seq = seq
		}
		return req, nil
	case args[0] == "compare":
		if len(args) != 3 {
			return bad("compare takes two run ids")
		}
		for _, id := range args[1:] {
			if kind, err := backend.KindOf(id); err != nil || kind != backend.KindRun {
				return bad("%q is not a run id (run_…)", id)
			}
		}
		return OpenRequest{Screen: "compare", ID: args[1], Other: args[2]}, nil
	case len(args) > 1:
		return bad("open takes one screen or id, got %q", strings.Join(args, " "))
	}
	if req, ok := openScreens[args[0]]; ok {
		return req, nil
	}
	switch kind, err := backend.KindOf(args[0]); {
	case err != nil:
		return bad("%q is neither a screen nor a run or world id", args[0])
	case kind == backend.KindRun:
		return OpenRequest{Screen: "run", ID: args[0]}, nil
	case kind == backend.KindWorld:
		return OpenRequest{Screen: "world", ID: args[0]}, nil
	default:
		return bad("%s is a %s id; open shows runs and worlds", args[0], kind)
	}
}

// SetOpen records what the window should show once its page asks
// (TakeOpen). It is a function, not a method, so the UI never binds it.
func SetOpen(a *API, req OpenRequest) {
	a.openMu.Lock()
	a.open = &req
	a.openMu.Unlock()
}

// TakeOpen returns, once, what `ducklm open` asked the window to show; the
// zero Opened when nothing was asked (always, in a browser).
func (a *API) TakeOpen() (Opened, error) {
	a.openMu.Lock()
	req := a.open
	a.open = nil
	a.openMu.Unlock()
	if req == nil || req.Screen == "" {
		return Opened{}, nil
	}
	return a.Resolve(*req), nil
}

// Resolve turns an open request into the route that shows it: a run id is a
// task run's view or a simulated world's, a world id selects the world in
// the lineage. An id that does not exist answers home with the sentence.
func (a *API) Resolve(req OpenRequest) Opened {
	home := Opened{Route: OpenRoute{Screen: "home"}}
	if req.ID == "" {
		return Opened{Route: OpenRoute{Screen: req.Screen, Section: req.Section}}
	}
	if err := a.ready(); err != nil {
		home.Error = err.Error()
		return home
	}
	ctx := a.ctx()
	if req.Screen == "compare" {
		for _, id := range []string{req.ID, req.Other} {
			if _, err := a.svc.Worlds.Run(ctx, id); err != nil {
				home.Error = a.fail("open", err).Error()
				return home
			}
		}
		return Opened{Route: OpenRoute{Screen: "lineage", Compare: []string{req.ID, req.Other}}}
	}
	if req.Screen == "world" {
		if _, err := a.svc.Worlds.Spec(ctx, req.ID); err != nil {
			home.Error = a.fail("open", err).Error()
			return home
		}
		return Opened{Route: OpenRoute{Screen: "lineage", Select: req.ID}}
	}
	run, err := a.svc.Worlds.Run(ctx, req.ID)
	if err != nil {
		home.Error = a.fail("open", err).Error()
		return home
	}
	spec, err := a.svc.Worlds.Spec(ctx, run.WorldID)
	if err != nil {
		home.Error = a.fail("open", err).Error()
		return home
	}
	if req.Screen == "timeline" {
		return Opened{Route: OpenRoute{Screen: "timeline", RunID: run.ID, Seq: req.Seq, World: spec.Domain != backend.DomainReal}}
	}
	if spec.Domain == backend.DomainReal {
		return Opened{Route: OpenRoute{Screen: "run", RunID: run.ID}}
	}
	return Opened{Route: OpenRoute{Screen: "world", RunID: run.ID}}
}
