package memory

import (
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"

	"ducklm/backend/memorypolicy"
)

// secretRule finds one kind of secret. When group > 0 only that submatch is
// the secret (the name of an assignment stays readable).
type secretRule struct {
	kind  string
	re    *regexp.Regexp
	group int
	// hints, when set, are strings of which a match holds one, lowercased:
	// a text whose lowercased form (with the two non-ASCII letters that
	// fold to ASCII ones, ſ and K, as s and k) has none is not searched.
	hints []string
	// token: a match is a run of at least minTokenRun token characters
	// (tokenChar), and a text with none is not searched.
	token bool
	// accept, when set, vets a generic match (entropy, exemptions).
	accept func(text string, start, end int) bool
}

// secretRules run in order; a later rule ignores text an earlier one
// already claimed, so specific kinds win over the generic token rules. They
// compile on first use: every command would pay for them at start, and
// most scan no text.
var secretRules = sync.OnceValue(func() []secretRule {
	return []secretRule{
		{kind: "private_key", hints: []string{"-----begin "}, re: regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)`)},
		{kind: "anthropic_key", hints: []string{"sk-ant-"}, re: regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{20,}`)},
		{kind: "openai_key", hints: []string{"sk-"}, re: regexp.MustCompile(`sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}`)},
		{kind: "stripe_key", hints: []string{"_live_", "_test_"}, re: regexp.MustCompile(`\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}`)},
		{kind: "github_token", hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})`)},
		{kind: "gitlab_token", hints: []string{"glpat-"}, re: regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{20,}`)},
		{kind: "huggingface_token", hints: []string{"hf_"}, re: regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`)},
		{kind: "aws_access_key", hints: []string{"akia", "asia", "agpa", "aida", "aroa", "anpa"}, re: regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b`)},
		{kind: "slack_token", hints: []string{"xox"}, re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9\-]{10,}`)},
		{kind: "slack_webhook", hints: []string{"https://hooks.slack.com/services/"}, re: regexp.MustCompile(`https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+`)},
		{kind: "google_api_key", hints: []string{"aiza"}, re: regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`)},
		{kind: "jwt", hints: []string{"eyj"}, re: regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{10,}`)},
		{kind: "bearer_token", hints: []string{"bearer"}, re: regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{16,}=*)`), group: 1},
		{kind: "url_password", hints: []string{"://"}, re: regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.\-]*://[^/\s:@]+:([^/\s@]+)@`), group: 1},
		{kind: "password", hints: []string{"password", "passwd", "passphrase", "pwd"}, re: regexp.MustCompile(`(?i)[a-z0-9_\-]*(?:password|passwd|passphrase|pwd)(?:[_\-][a-z0-9_\-]*)?["']?[ \t]*[:=][ \t]*("[^"\n]+"|'[^'\n]+'|[^\s,;'"]+)`), group: 1},
		{kind: "credential", hints: []string{"secret", "key", "token"}, re: regexp.MustCompile(`(?i)[a-z0-9_\-]*(?:secret|api[_\-]?key|access[_\-]?key|access[_\-]?token|auth[_\-]?token|token|private[_\-]?key)(?:[_\-][a-z0-9_\-]*)?["']?[ \t]*[:=][ \t]*("[^"\n]+"|'[^'\n]+'|[^\s,;'"]+)`), group: 1,
			accept: credentialValue},
		{kind: "hex_token", token: true, re: regexp.MustCompile(`\b[0-9a-fA-F]{32,}\b`), accept: hexSecret},
		{kind: "base64_token", token: true, re: regexp.MustCompile(`[A-Za-z0-9+/_\-]{32,}={0,2}`), accept: base64Secret},
	}
})

// minTokenRun is the shortest run of token characters the token rules match.
const minTokenRun = 32

// tokenChar says whether c may be in a hex or base64 token.
func tokenChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '_' || c == '-'
}

// hasTokenRun says whether text has minTokenRun token characters in a row.
func hasTokenRun(text string) bool {
	run := 0
	for i := 0; i < len(text); i++ {
		if !tokenChar(text[i]) {
			run = 0
		} else if run++; run >= minTokenRun {
			return true
		}
	}
	return false
}

// hinted says whether the lowercased text holds one of the rule's hints.
func (r secretRule) hinted(lower string) bool {
	if len(r.hints) == 0 {
		return true
	}
	for _, h := range r.hints {
		if strings.Contains(lower, h) {
			return true
		}
	}
	return false
}

// credentialValue keeps "max_tokens: 4096" or "secret: true" readable: a
// credential has at least 8 characters, mixing digits, cases or symbols.
func credentialValue(text string, start, end int) bool {
	v := strings.Trim(text[start:end], `"'`)
	if len(v) < 8 {
		return false
	}
	var upper, lower, digit, other bool
	for _, r := range v {
		switch {
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsLower(r):
			lower = true
		case unicode.IsDigit(r):
			digit = true
		default:
			other = true
		}
	}
	return (upper || lower) && (digit || other || upper && lower)
}

// digestLabel marks a hex string as a digest or a commit, not a secret.
var digestLabel = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:sha(?:1|224|256|384|512)|md5|blake2b?|digest|checksum|commit)[\s:=\-]*$`)
})

func hexSecret(text string, start, end int) bool {
	if digestLabel().MatchString(text[max(0, start-12):start]) {
		return false
	}
	return entropy(text[start:end]) >= 3.0
}

func base64Secret(text string, start, end int) bool {
	s := text[start:end]
	var upper, lower, digit int
	for _, r := range s {
		switch {
		case unicode.IsUpper(r):
			upper++
		case unicode.IsLower(r):
			lower++
		case unicode.IsDigit(r):
			digit++
		}
	}
	return upper >= 2 && lower >= 2 && digit >= 2 && entropy(s) >= 4.0
}

// entropy is the Shannon entropy of s in bits per character.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	var h float64
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// Scan is what the secret scanner found in a text.
type Scan struct {
	// Kinds lists the kinds of secret found, sorted, once each.
	Kinds []string
	// Redacted is the text with every secret replaced by [REDACTED:kind].
	Redacted string
	// Share is the share of the text's words that hold a secret.
	Share float64
	// Redactable: the redacted text still has words worth keeping.
	Redactable bool
}

// minRedactedLetters is how many letters outside the [REDACTED:…] markers
// a redacted text needs to be worth keeping.
const minRedactedLetters = 12

type span struct {
	start, end int
	kind       string
}

// ScanSecrets finds API keys of common providers (OpenAI, Anthropic,
// GitHub, GitLab, AWS, Slack, Google, Stripe, Hugging Face), bearer tokens,
// private key PEM blocks, password and credential assignments, passwords in
// URLs, JWTs, and long high-entropy hex and base64 tokens, and redacts them.
func ScanSecrets(text string) Scan {
	var spans []span
	claimed := func(s, e int) bool {
		for _, sp := range spans {
			if s < sp.end && sp.start < e {
				return true
			}
		}
		return false
	}
	// Most texts hold none of what the rules look for: the hints and the
	// token run rule a search out in one pass each, where a search costs
	// one per rule (a rule starting with a repeated class tries every
	// position). (?i) folds ſ to s and K to k, which lowercasing leaves or
	// makes: ſ is made s here, so a hint is in lower whenever a match is.
	lower := strings.ReplaceAll(strings.ToLower(text), "ſ", "s")
	tokens := hasTokenRun(text)
	for _, rule := range secretRules() {
		if !rule.hinted(lower) || rule.token && !tokens {
			continue
		}
		for _, m := range rule.re.FindAllStringSubmatchIndex(text, -1) {
			s, e := m[0], m[1]
			if rule.group > 0 {
				s, e = m[2*rule.group], m[2*rule.group+1]
			}
			if s < 0 || s == e || claimed(s, e) || (rule.accept != nil && !rule.accept(text, s, e)) {
				continue
			}
			spans = append(spans, span{s, e, rule.kind})
		}
	}
	out := Scan{Redacted: text, Redactable: true}
	if len(spans) == 0 {
		return out
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	var b strings.Builder
	kinds := map[string]bool{}
	last := 0
	for _, sp := range spans {
		b.WriteString(text[last:sp.start])
		b.WriteString("[REDACTED:" + sp.kind + "]")
		last = sp.end
		kinds[sp.kind] = true
	}
	b.WriteString(text[last:])
	out.Redacted = b.String()
	for k := range kinds {
		out.Kinds = append(out.Kinds, k)
	}
	sort.Strings(out.Kinds)
	out.Share = secretShare(text, spans)
	out.Redactable = letters(redactedMarker().ReplaceAllString(out.Redacted, " ")) >= minRedactedLetters
	return out
}

var redactedMarker = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[REDACTED:[a-z0-9_]+\]`) })

// Safety returns the scan as the write policy's safety input.
func (s Scan) Safety() memorypolicy.Safety {
	return memorypolicy.Safety{SecretsFound: s.Kinds, SecretShare: s.Share, Redactable: s.Redactable}
}

// secretShare is the share of the text's words (runs of non-space) that
// hold a secret: a long key in a sentence is one word of it, a PEM block
// alone is all of it.
func secretShare(text string, spans []span) float64 {
	words, secret := 0, 0
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		words++
		for _, sp := range spans {
			if start < sp.end && sp.start < end {
				secret++
				break
			}
		}
		start = -1
	}
	for i, r := range text {
		if unicode.IsSpace(r) {
			flush(i)
		} else if start < 0 {
			start = i
		}
	}
	flush(len(text))
	if words == 0 {
		return 0
	}
	return float64(secret) / float64(words)
}

func letters(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			n++
		}
	}
	return n
}
