package router_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/router"
)

func TestPickModel(t *testing.T) {
	t.Parallel()
	all := []string{"nomic-embed-text:latest", "mistral:7b", "llama3.1:8b", "qwen2.5:7b", "qwen2.5-coder:7b", "phi3:mini", "all-minilm:l6-v2", "mxbai-embed-large"}
	settings := func(role router.Role, model string) router.Settings {
		return router.Settings{Models: map[router.Role]string{role: model}}
	}
	tests := []struct {
		name      string
		role      router.Role
		available []string
		settings  router.Settings
		want      string
	}{
		{"preference order", router.RolePlanner, all, router.Settings{}, "qwen2.5-coder:7b"},
		{"same for coder", router.RoleCoder, all, router.Settings{}, "qwen2.5-coder:7b"},
		{"same for critic", router.RoleCritic, all, router.Settings{}, "qwen2.5-coder:7b"},
		{"qwen next", router.RolePlanner, []string{"mistral:7b", "qwen2.5:7b", "llama3.1:8b"}, router.Settings{}, "qwen2.5:7b"},
		{"llama3 next", router.RolePlanner, []string{"mistral:7b", "llama3.2", "phi3"}, router.Settings{}, "llama3.2"},
		{"mistral next", router.RolePlanner, []string{"phi3", "mistral"}, router.Settings{}, "mistral"},
		{"phi next", router.RolePlanner, []string{"gemma2", "phi3"}, router.Settings{}, "phi3"},
		{"alphabetical among a preference", router.RolePlanner, []string{"qwen2.5:7b", "qwen2.5:14b"}, router.Settings{}, "qwen2.5:14b"},
		{"else first alphabetically", router.RolePlanner, []string{"gemma2", "deepseek-r1", "Aya"}, router.Settings{}, "Aya"},
		{"user's choice", router.RolePlanner, all, settings(router.RolePlanner, "mistral:7b"), "mistral:7b"},
		{"user's choice without :latest", router.RolePlanner, []string{"qwen2.5", "gemma2:latest"}, settings(router.RolePlanner, "gemma2"), "gemma2:latest"},
		{"user's choice with :latest", router.RolePlanner, []string{"qwen2.5", "gemma2"}, settings(router.RolePlanner, "gemma2:latest"), "gemma2"},
		{"user's choice unavailable", router.RolePlanner, all, settings(router.RolePlanner, "gpt-oss:20b"), "qwen2.5-coder:7b"},
		{"user's choice for another role", router.RoleCoder, all, settings(router.RolePlanner, "mistral:7b"), "qwen2.5-coder:7b"},
		{"never an embedding model for chat", router.RolePlanner, []string{"nomic-embed-text", "qwen3-embedding", "all-minilm", "bge-m3"}, router.Settings{}, ""},
		{"not even when chosen", router.RoleCritic, []string{"nomic-embed-text", "phi3"}, settings(router.RoleCritic, "nomic-embed-text"), "phi3"},
		{"embedder preference", router.RoleEmbedder, all, router.Settings{}, "nomic-embed-text:latest"},
		{"mxbai next", router.RoleEmbedder, []string{"all-minilm", "mxbai-embed-large", "qwen2.5"}, router.Settings{}, "mxbai-embed-large"},
		{"all-minilm next", router.RoleEmbedder, []string{"all-minilm:l6-v2", "qwen2.5"}, router.Settings{}, "all-minilm:l6-v2"},
		{"any embed", router.RoleEmbedder, []string{"snowflake-arctic-embed", "qwen2.5"}, router.Settings{}, "snowflake-arctic-embed"},
		{"no chat model as embedder", router.RoleEmbedder, []string{"qwen2.5", "llama3"}, router.Settings{}, ""},
		{"user's embedder honoured", router.RoleEmbedder, []string{"nomic-embed-text", "custom-vectors"}, settings(router.RoleEmbedder, "custom-vectors"), "custom-vectors"},
		{"nothing available", router.RolePlanner, nil, settings(router.RolePlanner, "qwen2.5"), ""},
		{"empty names ignored", router.RolePlanner, []string{"", ""}, router.Settings{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := router.PickModel(tt.role, tt.available, tt.settings)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.want != "", ok)
		})
	}
}

func TestPickModelIgnoresInputOrderAndKeepsInput(t *testing.T) {
	t.Parallel()
	a := []string{"zephyr", "gemma2", "qwen2.5:7b", "qwen2.5:14b"}
	b := []string{"qwen2.5:14b", "gemma2", "zephyr", "qwen2.5:7b"}
	ma, _ := router.PickModel(router.RolePlanner, a, router.Settings{})
	mb, _ := router.PickModel(router.RolePlanner, b, router.Settings{})
	require.Equal(t, ma, mb)
	require.Equal(t, []string{"zephyr", "gemma2", "qwen2.5:7b", "qwen2.5:14b"}, a, "the input is not sorted in place")
}
