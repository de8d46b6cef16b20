// Package bundle exports runs as one signed .ducklm file and imports them
// elsewhere with every fact, checkpoint and lineage edge intact.
//
// A bundle is a tar archive compressed with zstd. Its entries, in this order:
//
//	manifest.json            format version, app version, creation time, root ids,
//	                         scope, counts, and the size and sha256 of every other entry
//	signature                ed25519 over the manifest bytes, with the public key
//	                         (absent in an unsigned bundle)
//	specs.jsonl              world specs, ancestors first
//	runs.jsonl               world runs, base runs first
//	forks.jsonl              fork records
//	checkpoints.jsonl        checkpoint records
//	events/<run id>.jsonl    each run's stream in seq order (JSON of backend.Event)
//	events/dlb_<…>.jsonl     a run's deliberation stream: the records of its
//	                         rounds (its branches are worlds forked from it)
//	blobs/sha256/<hex>       programs, checkpoint states and step outputs
//
// The package owns the format and its checks. It never trusts a path inside
// an archive (blobs reach the blob store by digest only), never writes
// before the whole bundle has been verified, and writes every record of an
// import in one database transaction. Export and import stream: memory does
// not grow with the number of events or the size of blobs.
package bundle
