package ollamatest

// TB is the part of testing.TB NewServer needs; declared here so this
// package does not import "testing" into binaries that link it.
type TB interface {
	Helper()
	Cleanup(func())
}

// NewServer starts a server with default options, closed when the test ends.
func NewServer(t TB) *Server {
	t.Helper()
	return NewServerWith(t, Options{})
}

// NewServerWith starts a server with opts, closed when the test ends.
func NewServerWith(t TB, opts Options) *Server {
	t.Helper()
	s := New(opts)
	t.Cleanup(s.Close)
	return s
}
