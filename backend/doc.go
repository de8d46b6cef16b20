// Package backend holds ducklm's domain: the types every other package shares
// (typed ids, errors, events, blob references, worlds, decisions) and the
// narrow interfaces the behaviour packages depend on.
//
// It imports no storage, no model client and no UI toolkit. Implementations
// live in packages named after what they wrap (backend/store, backend/blob,
// backend/starlark, ...); behaviour lives in packages named after the seed's
// components. Only app/ imports Wails.
package backend
