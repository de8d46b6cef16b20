package web

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	"golang.org/x/net/html/charset"
)

// Text is the readable text of a response.
type Text struct {
	Title string `json:"title,omitempty"`
	Text  string `json:"text"`
	// Kind says how the text was got: "article" (readability's main
	// content of an HTML page), "plain" (a text body as it is), or "none"
	// (a body with no text, such as an image).
	Kind string `json:"kind"`
}

// Extract returns the readable text of a response body: for HTML, the
// main content as go-readability finds it (the way a reader view does);
// for text, JSON, XML and the like, the body itself as UTF-8; for anything
// else, no text.
func Extract(body []byte, contentType, pageURL string) Text {
	mt, params, _ := mime.ParseMediaType(contentType)
	if mt == "" {
		mt = sniff(body)
	}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return article(body, contentType, pageURL)
	case strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json") ||
		mt == "application/xml" || strings.HasSuffix(mt, "+xml") || mt == "application/javascript":
		return Text{Text: decode(body, params["charset"]), Kind: "plain"}
	}
	return Text{Kind: "none"}
}

func sniff(body []byte) string {
	mt, _, _ := mime.ParseMediaType(http.DetectContentType(body))
	return mt
}

func article(body []byte, contentType, pageURL string) Text {
	u, _ := url.Parse(pageURL)
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		r = bytes.NewReader(body)
	}
	parser := readability.NewParser()
	a, err := parser.Parse(r, u)
	if err != nil || a.Node == nil {
		return Text{Kind: "article"}
	}
	var b strings.Builder
	if err := a.RenderText(&b); err != nil {
		return Text{Title: a.Title(), Kind: "article"}
	}
	return Text{Title: strings.TrimSpace(a.Title()), Text: tidy(b.String()), Kind: "article"}
}

// decode reads body as text in its charset, UTF-8 when it names none.
func decode(body []byte, cs string) string {
	if cs != "" && !strings.EqualFold(cs, "utf-8") {
		if r, err := charset.NewReaderLabel(cs, bytes.NewReader(body)); err == nil {
			if b, err := io.ReadAll(r); err == nil {
				return string(b)
			}
		}
	}
	if utf8.Valid(body) {
		return string(body)
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

// tidy trims each line and keeps at most one blank line between blocks.
func tidy(s string) string {
	var out []string
	blank := false
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			blank = len(out) > 0
			continue
		}
		if blank {
			out = append(out, "")
			blank = false
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
