// Package rooms_test keeps docs/map.md true: it reads the module's
// packages and their dependencies from `go list -deps` and fails when a room
// reaches one it must not (directly or through another), or when a room of
// backend/ or app/ is missing from the map.
package rooms_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "ducklm"

// Groups of rooms, by import path (a room stands for its subpackages too).
var (
	policy  = []string{"ducklm/backend/router", "ducklm/backend/planner", "ducklm/backend/critic", "ducklm/backend/memorypolicy"}
	storage = []string{"ducklm/backend/store", "ducklm/backend/blob", "ducklm/backend/chromem"}
	tools   = []string{"ducklm/backend/tool", "ducklm/backend/bwrap", "ducklm/backend/web", "ducklm/backend/webproc", "ducklm/backend/worldproc", "ducklm/backend/mcpclient"}
	window  = []string{"ducklm/app", "github.com/wailsapp/wails"}
	rt      = []string{"ducklm/backend/runtime"}
	worlds  = []string{"ducklm/backend/world", "ducklm/backend/deliberation"}
)

// rule: no room of From may depend on a room of MustNot.
type rule struct {
	From, MustNot []string
	Why           string
}

var rules = []rule{
	{policy, slices.Concat(storage, tools, window), "policy returns decisions; it neither stores, acts nor draws"},
	{storage, rt, "storage stores what the runtime tells it to"},
	{worlds, rt, "a task run uses worlds and search, not the other way round"},
}

// in reports whether pkg is one of rooms or under one.
func in(pkg string, rooms []string) bool {
	for _, r := range rooms {
		if pkg == r || strings.HasPrefix(pkg, r+"/") {
			return true
		}
	}
	return false
}

type pkg struct {
	ImportPath string
	Deps       []string
}

// listPackages returns every package of the module with its dependencies.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	cmd := exec.Command(goBin, "list", "-json=ImportPath,Deps", module+"/...")
	cmd.Dir = filepath.Join("..", "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", stderr.String())
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		pkgs = append(pkgs, p)
	}
	require.Greater(t, len(pkgs), 30, "go list found the module's packages")
	return pkgs
}

func TestNoRoomImportsOneItMustNot(t *testing.T) {
	pkgs := listPackages(t)
	var broken []string
	for _, r := range rules {
		checked := 0
		for _, p := range pkgs {
			if !in(p.ImportPath, r.From) {
				continue
			}
			checked++
			for _, d := range p.Deps {
				if in(d, r.MustNot) {
					broken = append(broken, p.ImportPath+" imports "+d+" ("+r.Why+")")
				}
			}
		}
		require.NotZero(t, checked, "no package matched %v: rename the rule with the room", r.From)
	}
	require.Empty(t, broken, "docs/map.md: a room imports one it must not:\n%s", strings.Join(broken, "\n"))
}

func TestTheMapNamesEveryRoom(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "map.md"))
	require.NoError(t, err)
	var missing []string
	for _, p := range listPackages(t) {
		path, ok := strings.CutPrefix(p.ImportPath, module+"/")
		if !ok || !(path == "app" || strings.HasPrefix(path, "backend/")) {
			continue
		}
		if !bytes.Contains(doc, []byte("`"+path+"`")) {
			missing = append(missing, path)
		}
	}
	require.Empty(t, missing, "rooms missing from docs/map.md's table")
}
