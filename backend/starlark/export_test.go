package starlark

import (
	"context"

	sl "go.starlark.net/starlark"
)

// PortableLog exposes portableLog to the external tests.
var PortableLog = portableLog

// RunPanicking runs a call whose Go code panics, as a bug in a built-in would.
func RunPanicking(p *Program) error {
	return p.run(context.Background(), "step", func(*sl.Thread) (sl.Value, error) {
		panic("boom")
	})
}
