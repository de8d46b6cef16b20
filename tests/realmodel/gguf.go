package realmodel

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"

	"github.com/ollama/ollama/fs/ggml"
)

// behaviour is how a tiny model's fixed logit biases make it answer. The
// weights are seeded random; a few hidden dimensions that no layer writes
// to carry the biases:
//   - dim 0 is 1 for every token: a bias on the next token whatever came;
//   - dim 1 is 1 when the current token is 'o';
//   - dim 2 is 1 when the current token is 'k'.
type behaviour int

const (
	// short answers "ok" and stops: 'o' → 'k' → end (or '"' inside a
	// JSON string), and '}' / ']' beat ',' after a value, so answers a
	// server's grammar forces into a schema stay short.
	short behaviour = iota
	// random has no biases: whatever the random weights make of it.
	random
	// looping answers 'o' after 'o' and never ends: the server stops it
	// after more than 30 identical tokens.
	looping
	// endless never chooses to end, nor to close a string: an answer runs
	// to its token limit, even under a JSON grammar.
	endless
)

// f32 is tensor data.
type f32 []float32

func (d f32) WriteTo(w io.Writer) (int64, error) {
	if err := binary.Write(w, binary.LittleEndian, []float32(d)); err != nil {
		return 0, err
	}
	return int64(4 * len(d)), nil
}

// byteRunes is GPT-2's byte-to-character map: a byte-level BPE vocabulary
// whose 256 tokens are the bytes, with no merges, spells any text.
func byteRunes() [256]rune {
	var m [256]rune
	n := 0
	for b := range 256 {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			m[b] = rune(b)
		} else {
			m[b] = rune(256 + n)
			n++
		}
	}
	return m
}

// writeModel writes a llama-architecture GGUF with seeded random weights
// (2 layers, hidden size 64, a byte vocabulary; ≈ 0.5 MB) that answers as
// b says, with Ollama's own GGUF writer.
func writeModel(path string, b behaviour, seed int64) error {
	const (
		embd, layers, heads, ff = 16, 1, 2, 32
		ctx                     = 4096
		reserved                = 3 // hidden dims 0..2 carry the biases
	)
	runes := byteRunes()
	tokens := make([]string, 0, 259)
	types := make([]int32, 0, 259)
	for i := range 256 {
		tokens = append(tokens, string(runes[i]))
		types = append(types, 1) // normal
	}
	bos, eos, pad := len(tokens), len(tokens)+1, len(tokens)+2
	tokens = append(tokens, "<|bos|>", "<|eos|>", "<|pad|>")
	types = append(types, 3, 3, 3) // control
	vocab := len(tokens)

	rng := rand.New(rand.NewSource(seed))
	normal := func(n int, std float64) f32 {
		d := make(f32, n)
		for i := range d {
			d[i] = float32(rng.NormFloat64() * std)
		}
		return d
	}
	ones := func(n int) f32 {
		d := make(f32, n)
		for i := range d {
			d[i] = 1
		}
		return d
	}
	var ts []*ggml.Tensor
	add := func(name string, data f32, shape ...uint64) {
		ts = append(ts, &ggml.Tensor{Name: name, Kind: uint32(ggml.TensorTypeF32), Shape: shape, WriterTo: data})
	}

	// token_embd is [embd, vocab], embd contiguous: token t's vector at t*embd.
	emb := normal(embd*vocab, 1)
	for t := range vocab {
		emb[t*embd+0], emb[t*embd+1], emb[t*embd+2] = 1, 0, 0
	}
	emb['o'*embd+1] = 1
	emb['k'*embd+2] = 1
	add("token_embd.weight", emb, embd, uint64(vocab))

	s := 1 / math.Sqrt(embd)
	for l := range layers {
		p := fmt.Sprintf("blk.%d.", l)
		add(p+"attn_norm.weight", ones(embd), embd)
		add(p+"ffn_norm.weight", ones(embd), embd)
		add(p+"attn_q.weight", normal(embd*embd, s), embd, embd)
		add(p+"attn_k.weight", normal(embd*embd, s), embd, embd)
		add(p+"attn_v.weight", normal(embd*embd, s), embd, embd)
		// What writes into the residual stream stays small and leaves the
		// reserved dims alone: element (in, out) is at out*in_size+in.
		out := normal(embd*embd, 0.1*s)
		clear(out[:reserved*embd])
		add(p+"attn_output.weight", out, embd, embd)
		add(p+"ffn_gate.weight", normal(embd*ff, s), embd, ff)
		add(p+"ffn_up.weight", normal(embd*ff, s), embd, ff)
		down := normal(ff*embd, 0.1/math.Sqrt(ff))
		clear(down[:reserved*ff])
		add(p+"ffn_down.weight", down, ff, embd)
	}
	add("output_norm.weight", ones(embd), embd)
	// output is [embd, vocab]: token t's logit reads dims t*embd...
	outW := normal(embd*vocab, 0.1)
	for t := range vocab {
		clear(outW[t*embd : t*embd+reserved])
	}
	bias := func(tok, dim int, v float32) { outW[tok*embd+dim] = v }
	switch b {
	case short:
		bias('o', 0, 4)
		bias('"', 0, 3)
		bias('}', 0, 2.5)
		bias(']', 0, 2.5)
		bias(',', 0, 2)
		bias('k', 1, 7)
		bias(eos, 2, 10)
		bias('"', 2, 6)
	case looping:
		bias('o', 0, 8)
		bias('o', 1, 12)
	case endless:
		// Never the end of the answer, and never the end of a string: under
		// a JSON schema's grammar (Ollama's format) an answer could otherwise
		// close its last value and be complete by chance, as one with seed 1
		// at temperature 0.3 did once the planner's prompt changed.
		bias(eos, 0, -30)
		bias('"', 0, -30)
	}
	add("output.weight", outW, embd, uint64(vocab))

	kv := ggml.KV{
		"general.architecture":                   "llama",
		"general.name":                           "ducklm-tiny",
		"general.file_type":                      uint32(0), // all F32
		"general.alignment":                      uint32(32),
		"llama.vocab_size":                       uint32(vocab),
		"llama.context_length":                   uint32(ctx),
		"llama.embedding_length":                 uint32(embd),
		"llama.block_count":                      uint32(layers),
		"llama.feed_forward_length":              uint32(ff),
		"llama.attention.head_count":             uint32(heads),
		"llama.attention.head_count_kv":          uint32(heads),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-5),
		"llama.rope.dimension_count":             uint32(embd / heads),
		"llama.rope.freq_base":                   float32(10000),
		"tokenizer.ggml.model":                   "gpt2",
		"tokenizer.ggml.pre":                     "default",
		"tokenizer.ggml.tokens":                  tokens,
		"tokenizer.ggml.token_type":              types,
		"tokenizer.ggml.scores":                  make([]float32, vocab),
		"tokenizer.ggml.merges":                  []string{},
		"tokenizer.ggml.bos_token_id":            uint32(bos),
		"tokenizer.ggml.eos_token_id":            uint32(eos),
		"tokenizer.ggml.padding_token_id":        uint32(pad),
		"tokenizer.ggml.add_bos_token":           false,
		"tokenizer.ggml.add_eos_token":           false,
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := ggml.WriteGGUF(f, kv, ts); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
