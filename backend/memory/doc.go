// Package memory is ducklm's memory store: a storage subsystem, not a JSON
// dump. It owns
//
//   - the memories themselves, rows in the database (the source of truth,
//     through the narrow Repo interface that backend/store implements);
//   - their vectors in an in-memory chromem-go index (backend/chromem),
//     one collection per embedding model, built from the database at start
//     (or from a snapshot that matches it), kept in step with every write
//     and, through Follow, with the memories other processes store;
//   - the embedders: Ollama's /api/embed with a chosen model, and a built-in
//     deterministic hashing embedder for when there is none;
//   - the secret scanner that redacts API keys, tokens, private keys and
//     passwords before a text is hashed, embedded or stored;
//   - retrieval (Retrieve), which feeds the context builder, and the write
//     path (Consider), which gathers the write policy's inputs, asks
//     backend/memorypolicy for the decision, applies it, and records it as
//     a "memory.decided" event on the run's stream in the same transaction
//     (its inputs, the policy table by digest and the outcome by reference
//     to them: ReadDecided gives the whole decision back).
//
// Retrieval and the write decision are separate on purpose (seed §10). The
// store never decides what is worth keeping: the policy does, and the
// critic only scores. A world-local result is kept only as a hypothesis
// naming its world; the policy, the store and the database's CHECK
// constraint each refuse anything else. A failure of the store skips the
// write and records why ("memory.skipped"); it never stops a run.
package memory
