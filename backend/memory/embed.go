package memory

import (
	"context"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"ducklm/backend"
	"ducklm/backend/chromem"
	"ducklm/backend/ollama"
)

// Embedder turns texts into unit-length vectors under one model. Vectors of
// different models never meet: each model has its own index collection.
type Embedder interface {
	// Name names the model; it is stored with every vector it made.
	Name() string
	// Embed returns one unit vector per text, all of one length.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// HashDims is the length of the built-in embedder's vectors.
const HashDims = 384

// HashModel is the name of the built-in embedder at HashDims.
const HashModel = "ducklm-hash-384"

// HashEmbedder is the built-in deterministic embedder that serves when no
// embedding model is present: word unigrams and bigrams and character
// 3-grams, hashed (FNV-1a, signed) into Dims buckets and scaled to unit
// length. It knows no synonyms, but paraphrases that share words and word
// pieces land close together, which is what deduplication needs.
type HashEmbedder struct {
	Dims int // 0 means HashDims
}

var _ Embedder = HashEmbedder{}

func (h HashEmbedder) dims() int {
	if h.Dims <= 0 {
		return HashDims
	}
	return h.Dims
}

// Name implements Embedder.
func (h HashEmbedder) Name() string { return "ducklm-hash-" + strconv.Itoa(h.dims()) }

// Feature weights of the built-in embedder.
const (
	hashWordWeight    = 1.0
	hashBigramWeight  = 0.7
	hashTrigramWeight = 0.35
)

// Embed implements Embedder.
func (h HashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, err := h.embed(t)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (h HashEmbedder) embed(text string) ([]float32, error) {
	d := uint64(h.dims())
	acc := make([]float64, d)
	// add counts feature x (an FNV-1a hash of the feature's kind and text)
	// in its bucket, its sign from the hash's top bit.
	add := func(x uint64, w float64) {
		if x>>63 == 1 {
			w = -w
		}
		acc[x%d] += w
	}
	words := tokens(text)
	if len(words) == 0 {
		// No letters or digits: fall back to the characters themselves.
		if s := strings.TrimSpace(Normalise(text)); s != "" {
			words = []string{s}
		}
	}
	if len(words) == 0 {
		return nil, backend.Errorf(backend.EINVALID, "there is no text to embed")
	}
	// Each word adds itself, the bigram it ends (the two words with a
	// space between) and the trigrams of its runes framed by ^ and $. The
	// features are hashed as they are read, in this order: the sums, and
	// so the vectors stored, are the same bit for bit as when each
	// feature was first built as a string.
	var framed []rune
	var enc [utf8.UTFMax]byte
	for i, w := range words {
		add(fnvString(fnvByte(fnvOffset, 'w'), w), hashWordWeight)
		if i > 0 {
			x := fnvString(fnvByte(fnvOffset, 'b'), words[i-1])
			add(fnvString(fnvByte(x, ' '), w), hashBigramWeight)
		}
		framed = append(framed[:0], '^')
		for _, r := range w {
			framed = append(framed, r)
		}
		framed = append(framed, '$')
		for j := 0; j+3 <= len(framed); j++ {
			x := fnvByte(fnvOffset, 'c')
			for _, r := range framed[j : j+3] {
				n := utf8.EncodeRune(enc[:], r)
				for _, b := range enc[:n] {
					x = fnvByte(x, b)
				}
			}
			add(x, hashTrigramWeight)
		}
	}
	v := make([]float32, d)
	for i, f := range acc {
		v[i] = float32(f)
	}
	v, ok := chromem.Normalise(v)
	if !ok {
		return nil, backend.Errorf(backend.EINVALID, "the text hashes to a zero vector")
	}
	return v, nil
}

// tokens splits text into lower-case words of letters and digits.
func tokens(text string) []string {
	return strings.FieldsFunc(strings.ToLower(norm.NFKC.String(text)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

const (
	fnvOffset uint64 = 14695981039346656037
	fnvPrime  uint64 = 1099511628211
)

func fnvByte(x uint64, b byte) uint64 { return (x ^ uint64(b)) * fnvPrime }

func fnvString(x uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		x = fnvByte(x, s[i])
	}
	return x
}

// OllamaEmbedder embeds through Ollama's /api/embed with one model, always
// asked for by its full name so that a vector's model is unambiguous.
type OllamaEmbedder struct {
	Client *ollama.Client
	Model  string
}

var _ Embedder = OllamaEmbedder{}

// ollamaBatch bounds the texts of one /api/embed request.
const ollamaBatch = 64

// Name implements Embedder: the model with its tag (":latest" when none is
// given), so "nomic-embed-text" and "nomic-embed-text:latest" share vectors.
func (o OllamaEmbedder) Name() string {
	name := o.Model
	if i := strings.LastIndex(name, "/"); !strings.Contains(name[i+1:], ":") {
		name += ":latest"
	}
	return name
}

// Embed implements Embedder. Ollama's vectors are scaled to unit length
// here whatever the model returns, and must all have one length.
func (o OllamaEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if o.Client == nil {
		return nil, backend.Errorf(backend.EUNAVAILABLE, "no Ollama client is configured to embed with %s", o.Name())
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += ollamaBatch {
		batch := texts[start:min(start+ollamaBatch, len(texts))]
		vecs, err := o.Client.Embed(ctx, o.Name(), batch)
		if err != nil {
			return nil, err
		}
		for _, v := range vecs {
			if len(out) > 0 && len(v) != len(out[0]) {
				return nil, backend.Errorf(backend.EINTERNAL, "%s returned vectors of %d and %d dimensions", o.Name(), len(out[0]), len(v))
			}
			v, ok := chromem.Normalise(append([]float32(nil), v...))
			if !ok {
				return nil, backend.Errorf(backend.EINTERNAL, "%s returned a zero or invalid vector", o.Name())
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// EmbedderFor returns the embedder named name: the built-in one for ""
// or a "ducklm-hash-N" name, else the Ollama model through client.
func EmbedderFor(name string, client *ollama.Client) Embedder {
	if name == "" {
		return HashEmbedder{}
	}
	if rest, ok := strings.CutPrefix(name, "ducklm-hash-"); ok {
		if n, err := strconv.Atoi(rest); err == nil && n > 0 && n <= 4096 {
			return HashEmbedder{Dims: n}
		}
	}
	return OllamaEmbedder{Client: client, Model: name}
}
