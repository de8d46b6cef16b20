package router

import (
	"slices"
	"strings"
)

// chatPreference and embedPreference are the fallbacks when the user chose
// no available model for a role: the first preference any available model's
// name contains wins; among several, the first alphabetically.
var (
	chatPreference  = []string{"qwen2.5-coder", "qwen", "llama3", "mistral", "phi"}
	embedPreference = []string{"nomic-embed-text", "mxbai-embed", "all-minilm", "embed"}
)

// PickModel chooses the model for a role from the models Ollama lists:
//
//   - the user's setting for the role, when it is available (an exact match,
//     or equal once a ":latest" tag is dropped from either side);
//   - else, for planner, coder and critic, the first available name that
//     contains "qwen2.5-coder", "qwen", "llama3", "mistral", "phi" (in that
//     order of preference), else the first alphabetically;
//   - for the embedder, "nomic-embed-text", "mxbai-embed", "all-minilm", then
//     any name containing "embed".
//
// An embedding model is never picked for a chat role (not even when the
// user's setting names one), and a chat model never for the embedder
// unless the user chose it. It returns ("", false) when nothing fits; the
// caller then works offline (the offline planner, the built-in embedder) or
// reports that no model is available.
func PickModel(role Role, available []string, settings Settings) (string, bool) {
	models := make([]string, 0, len(available))
	for _, m := range available {
		if m != "" && !slices.Contains(models, m) {
			models = append(models, m)
		}
	}
	slices.SortFunc(models, func(a, b string) int {
		if c := strings.Compare(strings.ToLower(a), strings.ToLower(b)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	embedder := role == RoleEmbedder
	if want := settings.Models[role]; want != "" {
		for _, m := range models {
			if sameModel(m, want) && (embedder || !isEmbedding(m)) {
				return m, true
			}
		}
	}
	prefs := chatPreference
	if embedder {
		prefs = embedPreference
	}
	for _, p := range prefs {
		for _, m := range models {
			if strings.Contains(strings.ToLower(m), p) && isEmbedding(m) == embedder {
				return m, true
			}
		}
	}
	if !embedder {
		for _, m := range models {
			if !isEmbedding(m) {
				return m, true
			}
		}
	}
	return "", false
}

// sameModel compares model names, ignoring case and a ":latest" tag.
func sameModel(a, b string) bool {
	return strings.EqualFold(strings.TrimSuffix(a, ":latest"), strings.TrimSuffix(b, ":latest"))
}

// IsEmbeddingModel reports whether a model name looks like an embedding
// model (its name says embed, minilm or bge), as PickModel judges it.
func IsEmbeddingModel(name string) bool { return isEmbedding(name) }

// isEmbedding reports whether a model name looks like an embedding model.
func isEmbedding(name string) bool {
	base := strings.ToLower(name[strings.LastIndexByte(name, '/')+1:])
	return strings.Contains(base, "embed") || strings.Contains(base, "minilm") || strings.HasPrefix(base, "bge")
}
