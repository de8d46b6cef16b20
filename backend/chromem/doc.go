// Package chromem is ducklm's vector index: github.com/philippgille/chromem-go
// held in memory, with one collection per embedding model so that vectors
// of different models never meet in one query.
//
// The index is a cache, never the source of truth: the database holds every
// memory and its vector, and the index is built from it at start. chromem-go's
// own per-document persistence stays off. A snapshot file (snapshot.go) may
// speed the start up; it carries the digest of the database state it was
// taken from and a SHA-256 of its body, and a snapshot that does not match
// both is ignored, so the caller rebuilds from the database.
//
// The index accepts only unit-length vectors of one length per model. It
// holds no policy and knows nothing about memories: documents are ids,
// vectors, string metadata (filterable) and content.
package chromem
