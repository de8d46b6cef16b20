package memory

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/chromem"
)

// embedAsBuilt is the built-in embedder as it was first written: each
// feature built as a string, then hashed. The vectors it made are stored
// in users' indexes, so HashEmbedder must make the same ones, bit for bit.
func embedAsBuilt(dims int, text string) ([]float32, bool) {
	acc := make([]float64, dims)
	add := func(kind byte, parts []string, w float64) {
		x := fnvOffset
		x = fnvByte(x, kind)
		for i, p := range parts {
			if i > 0 {
				x = fnvByte(x, ' ')
			}
			x = fnvString(x, p)
		}
		if x>>63 == 1 {
			w = -w
		}
		acc[x%uint64(dims)] += w
	}
	words := tokens(text)
	if len(words) == 0 {
		if s := strings.TrimSpace(Normalise(text)); s != "" {
			words = []string{s}
		}
	}
	if len(words) == 0 {
		return nil, false
	}
	for i, w := range words {
		add('w', []string{w}, hashWordWeight)
		if i > 0 {
			add('b', []string{words[i-1], w}, hashBigramWeight)
		}
		r := []rune("^" + w + "$")
		for j := 0; j+3 <= len(r); j++ {
			add('c', []string{string(r[j : j+3])}, hashTrigramWeight)
		}
	}
	v := make([]float32, dims)
	for i, f := range acc {
		v[i] = float32(f)
	}
	return chromem.Normalise(v)
}

// TestHashEmbedderMakesTheVectorsItAlwaysMade: texts of every kind, in
// scripts of several widths, with symbols only, invalid UTF-8 and
// combining marks, embed to exactly the vectors of the first version.
func TestHashEmbedderMakesTheVectorsItAlwaysMade(t *testing.T) {
	texts := []string{
		"hello\n", "Hello, World! hello world", "file_read f.txt → 6 bytes: hello",
		"Straße STRASSE ﬁle Ǆemal ſtop", "日本語のテキスト と English mixed", "Ελληνικά κείμενα και 123",
		"😀 emoji 🎉 party", "!!! ??? ...", "  \t ", "a", "ab", "\xff\xfe bad \xc3 bytes \xe2\x82",
		"e\u0301 cafe\u0301 ﬀ ①②③ ｆｕｌｌ ｗｉｄｔｈ", strings.Repeat("word ", 500),
	}
	r := rand.New(rand.NewPCG(7, 28))
	alphabet := []rune("abcXYZ019 ._-ßſǅ日本ωΩ😀\u0301\uFFFD\t\n")
	for range 300 {
		n := r.IntN(80)
		b := make([]rune, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		texts = append(texts, string(b))
	}
	for _, dims := range []int{HashDims, 64} {
		e := HashEmbedder{Dims: dims}
		for _, text := range texts {
			want, ok := embedAsBuilt(dims, text)
			got, err := e.embed(text)
			if !ok {
				require.Error(t, err, "%q", text)
				continue
			}
			require.NoError(t, err, "%q", text)
			require.Equal(t, want, got, "%q at %d dimensions", text, dims)
		}
	}
}

func BenchmarkHashEmbed(b *testing.B) {
	text := "step cost file_read {\"path\":\"f.txt\"} hello world: the quick brown fox jumps over the lazy dog, 42 times"
	e := HashEmbedder{}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.embed(text); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHashEmbedAsBuilt(b *testing.B) {
	text := "step cost file_read {\"path\":\"f.txt\"} hello world: the quick brown fox jumps over the lazy dog, 42 times"
	b.ReportAllocs()
	for b.Loop() {
		embedAsBuilt(HashDims, text)
	}
}
