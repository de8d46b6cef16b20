package memory_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/memory"
)

// Fake secrets, built at run time so no scanner of this repository mistakes
// the test file itself for a leak.
var (
	openAIKey    = "sk-" + "proj-" + strings.Repeat("Ab3xYz9Q", 6)
	anthropicKey = "sk-" + "ant-api03-" + strings.Repeat("Zq7Wm2Kp", 5)
	githubToken  = "gh" + "p_" + strings.Repeat("aB3dE5gH7j", 4)
	awsKey       = "AK" + "IA" + "IOSFODNN7EXAMPLE"
	slackToken   = "xo" + "xb-" + "2048-1234567890-" + strings.Repeat("Qw3r", 4)
	jwtToken     = "ey" + "JhbGciOiJIUzI1NiJ9.ey" + "JzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	bearerToken  = "Tk9UQV9SRUFMX1RPS0VO" + strings.Repeat("x7Yq", 4)
	pemBlock     = "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq9" + strings.Repeat("Qk3vT9", 10) + "\n-----END RSA PRIVATE KEY-----"
	hexToken     = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"[:40]
	b64Token     = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY9z"
	googleKey    = "AI" + "za" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
)

func TestScanFindsAndRedactsSecrets(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text, secret, kind string
	}{
		{"openai", "the key is " + openAIKey + " for the batch job", openAIKey, "openai_key"},
		{"anthropic", "use " + anthropicKey + " with the claude client", anthropicKey, "anthropic_key"},
		{"github", "GITHUB_TOKEN " + githubToken + " pushes the release", githubToken, "github_token"},
		{"aws", "aws configure set aws_access_key_id " + awsKey + " for the backup bucket", awsKey, "aws_access_key"},
		{"slack", "post to slack with " + slackToken + " in the ops channel", slackToken, "slack_token"},
		{"jwt", "the session cookie holds " + jwtToken + " until it expires", jwtToken, "jwt"},
		{"bearer", "curl -H 'Authorization: Bearer " + bearerToken + "' https://api.example.com works", bearerToken, "bearer_token"},
		{"pem", "the deploy key is\n" + pemBlock + "\nand it lives in the vault", pemBlock, "private_key"},
		{"password assignment", "connect with password=hunter2secret to the staging database", "hunter2secret", "password"},
		{"passwd colon", "the router config says passwd: Tr0ub4dor&3 for the admin user", "Tr0ub4dor&3", "password"},
		{"env password", "export PGPASSWORD='s3cr3t pass' before running psql on the host", "s3cr3t pass", "password"},
		{"json password", `the config file has {"password": "correct-horse-battery"} for the bot`, "correct-horse-battery", "password"},
		{"url password", "clone from https://deploy:Zx9pLm2Qw@git.example.com/repo.git every night", "Zx9pLm2Qw", "url_password"},
		{"credential", "set AWS_SECRET_ACCESS_KEY=" + b64Token + " in the runner environment", b64Token, "credential"},
		{"hex token", "the webhook signing secret " + hexToken + " verifies payloads", hexToken, "hex_token"},
		{"base64 token", "the service account uses " + b64Token + " to sign uploads", b64Token, "base64_token"},
		{"google", "maps need " + googleKey + " in the request", googleKey, "google_api_key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := memory.ScanSecrets(tc.text)
			require.Equal(t, []string{tc.kind}, s.Kinds, s.Redacted)
			require.NotContains(t, s.Redacted, tc.secret)
			require.Contains(t, s.Redacted, "[REDACTED:"+tc.kind+"]")
			require.Greater(t, s.Share, 0.0)
			require.True(t, s.Redactable, s.Redacted)
		})
	}
}

func TestScanLeavesOrdinaryTextAlone(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"the disk /dev/sda1 is 81% full; /var/log/journal holds 3.2 GB",
		"run run_0190a1b2c3d4e5f60718293a4b5c6d7e wrote memory mem_0190a1b2c3d4e5f60718293a4b5c6d7e",
		"blob sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 is stored",
		"commit 3f2a9c1e0b7d4a6f8e2c5b1a9d0e7f3c2b4a6d8e fixed the build",
		"request id 0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b finished",
		"set max_tokens: 4096 and temperature: 0.2 for the planner",
		"the password policy requires 12 characters",
		"pip installs to /usr/local/lib/python3.11/site-packages/numpy/core",
		"AbstractSingletonProxyFactoryBean is a class name",
	} {
		s := memory.ScanSecrets(text)
		require.Empty(t, s.Kinds, "%q: %s", text, s.Redacted)
		require.Equal(t, text, s.Redacted)
		require.Zero(t, s.Share)
		require.True(t, s.Redactable)
	}
}

func TestScanMostlySecret(t *testing.T) {
	t.Parallel()
	s := memory.ScanSecrets(pemBlock)
	require.Equal(t, []string{"private_key"}, s.Kinds)
	require.Greater(t, s.Share, 0.9)
	require.False(t, s.Redactable, "nothing but the key is left")

	s = memory.ScanSecrets("key: " + openAIKey + " " + githubToken)
	require.Equal(t, []string{"github_token", "openai_key"}, s.Kinds)
	require.False(t, s.Redactable)
	safety := s.Safety()
	require.Equal(t, s.Kinds, safety.SecretsFound)
	require.Equal(t, s.Share, safety.SecretShare)
}

func TestNormaliseAndHash(t *testing.T) {
	t.Parallel()
	require.Equal(t, "the disk is full", memory.Normalise("  The\tDISK  is\n full "))
	require.Equal(t, memory.ContentHash("The disk is full"), memory.ContentHash("the  disk is FULL"))
	require.Equal(t, memory.ContentHash("ﬁle"), memory.ContentHash("file"), "NFKC folds ligatures")
	require.NotEqual(t, memory.ContentHash("the disk is full"), memory.ContentHash("the disk is empty"))
	require.Len(t, memory.ContentHash("x"), 64)
}

// The scanner skips a rule whose hints the lowercased text lacks. (?i)
// folds ſ to s and K (the Kelvin sign) to k, so a name spelled with them
// is found as its rule finds it.
func TestSecretsSpelledWithFoldingLettersAreFound(t *testing.T) {
	for _, text := range []string{
		"paſsword = Hunter2Hunter2",
		"api_\u212Aey: Zx81mQ4wPq2",
		"auth_to\u212Aen=Zx81mQ4wPq2",
		"ſecret: Zx81mQ4wPq2",
	} {
		s := memory.ScanSecrets(text)
		require.NotEmpty(t, s.Kinds, "%q", text)
		require.NotContains(t, s.Redacted, "Zx81mQ4wPq2", "%q", text)
		require.NotContains(t, s.Redacted, "Hunter2Hunter2", "%q", text)
	}
}
