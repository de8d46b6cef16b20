package ollamatest

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
)

func (s *Server) embed(w http.ResponseWriter, rec Request) {
	var req api.EmbedRequest
	if err := decode(rec.Body, &req); err != nil {
		s.record(rec)
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	rec.Embed = &req
	s.record(rec)

	var inputs []string
	switch in := req.Input.(type) {
	case string:
		if in != "" {
			inputs = append(inputs, in)
		}
	case []any:
		for _, v := range in {
			str, ok := v.(string)
			if !ok {
				writeError(w, http.StatusBadRequest, "invalid input type")
				return
			}
			inputs = append(inputs, str)
		}
	case nil:
	default:
		writeError(w, http.StatusBadRequest, "invalid input type")
		return
	}
	if !s.installed(req.Model) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", req.Model))
		return
	}

	s.mu.Lock()
	fn, dims := s.onEmbed, s.dims
	s.mu.Unlock()
	if req.Dimensions > 0 && req.Dimensions < dims {
		dims = req.Dimensions
	}
	start := time.Now()
	out := make([][]float32, 0, len(inputs))
	tokens := 0
	for _, in := range inputs {
		tokens += len(strings.Fields(in))
		if fn == nil {
			out = append(out, Vector(req.Model, in, dims))
			continue
		}
		v, err := fn(req.Model, in)
		if err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, api.EmbedResponse{
		Model: req.Model, Embeddings: out,
		TotalDuration: time.Since(start) + time.Millisecond, LoadDuration: time.Millisecond,
		PromptEvalCount: tokens,
	})
}

// Vector is the embedding the server gives input under model when nothing
// else is scripted: dims floats drawn from SHA-256 of (model, input), scaled
// to unit length as Ollama's /api/embed returns them. Equal inputs get equal
// vectors; different inputs almost surely do not.
func Vector(model, input string, dims int) []float32 {
	v := make([]float32, dims)
	var sum float64
	var block [sha256.Size]byte
	for i := range v {
		if i%8 == 0 {
			h := sha256.New()
			fmt.Fprintf(h, "%s\x00%s\x00%d", model, input, i/8)
			h.Sum(block[:0])
		}
		u := binary.BigEndian.Uint32(block[(i%8)*4:])
		f := float64(u)/math.MaxUint32*2 - 1
		v[i] = float32(f)
		sum += f * f
	}
	if sum > 0 {
		n := math.Sqrt(sum)
		for i := range v {
			v[i] = float32(float64(v[i]) / n)
		}
	}
	return v
}

// ModelInfo synthesizes a /api/tags entry for name: its family from the name
// ("qwen2.5:7b" -> "qwen2.5"), its parameter size from the tag ("7b" ->
// "7B"), and a size of about 0.6 GB per billion parameters.
func ModelInfo(name string, modified time.Time) api.ListModelResponse {
	full := fullName(name)
	base, tag, _ := strings.Cut(full[strings.LastIndex(full, "/")+1:], ":")
	params := ""
	var billions float64
	if t := strings.ToLower(tag); strings.HasSuffix(t, "b") {
		if _, err := fmt.Sscanf(t, "%gb", &billions); err == nil {
			params = strings.ToUpper(t)
		}
	}
	if billions == 0 {
		billions = 0.3
	}
	sum := sha256.Sum256([]byte(full))
	return api.ListModelResponse{
		Name: full, Model: full, ModifiedAt: modified,
		Size:   int64(billions * 0.6e9),
		Digest: fmt.Sprintf("%x", sum),
		Details: api.ModelDetails{
			Format: "gguf", Family: base, Families: []string{base},
			ParameterSize: params, QuantizationLevel: "Q4_K_M",
		},
	}
}
