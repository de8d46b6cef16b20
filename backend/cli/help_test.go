package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// helpCommands reads the command names out of `ducklm help`.
func helpCommands(t *testing.T) []string {
	t.Helper()
	r := ducklm(t, "help")
	require.Equal(t, 0, r.code)
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^  ducklm ([a-z]+) `).FindAllStringSubmatch(r.stdout, -1) {
		names = append(names, m[1])
	}
	require.Greater(t, len(names), 10, "help lists the commands:\n%s", r.stdout)
	return names
}

// The manual page is written from the help text: every command and its
// summary, and the closing notes, appear in it, and man renders it cleanly.
func TestHelpManIsTheHelpText(t *testing.T) {
	r := ducklm(t, "help", "--man")
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, strings.HasPrefix(r.stdout, ".TH DUCKLM 1 "), r.stdout[:min(80, len(r.stdout))])
	help := ducklm(t, "help").stdout
	unescape := strings.NewReplacer(`\-`, "-", `\e`, `\`, `\&`, "")
	man := unescape.Replace(r.stdout)
	for _, name := range helpCommands(t) {
		require.Regexp(t, `(?m)^\.B ducklm `+name+`\b`, man, "command %s has an entry", name)
		summary := regexp.MustCompile(`(?m)^  ducklm ` + name + ` +(.*)$`).FindStringSubmatch(help)[1]
		require.Contains(t, man, "\n"+summary+"\n", "command %s has its help summary", name)
	}
	require.Contains(t, man, "Data directory: $DUCKLM_HOME")
	require.Contains(t, man, "Ollama: $OLLAMA_HOST")

	if _, err := exec.LookPath("man"); err == nil {
		page := filepath.Join(t.TempDir(), "ducklm.1")
		require.NoError(t, os.WriteFile(page, []byte(r.stdout), 0o644))
		cmd := exec.Command("man", "--warnings", "-l", page)
		cmd.Env = append(os.Environ(), "MANWIDTH=80", "MANPAGER=cat", "PAGER=cat")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "ducklm export RUN|WORLD")
		require.NotContains(t, string(out), "warning", "roff warnings:\n%s", out)
	}
}

// The bash completion offers every command of the help, and the screens of
// `ducklm open`, and bash reads it without error.
func TestHelpBashCompletion(t *testing.T) {
	r := ducklm(t, "help", "--bash")
	require.Equal(t, 0, r.code, r.stderr)
	for _, name := range helpCommands(t) {
		require.Regexp(t, `compgen -W "[^"]*\b`+name+`\b`, r.stdout)
	}
	require.Contains(t, r.stdout, "complete -o default -F _ducklm ducklm")
	script := filepath.Join(t.TempDir(), "ducklm.bash")
	require.NoError(t, os.WriteFile(script, []byte(r.stdout), 0o644))
	// Complete "ducklm open ru" as bash would, and "ducklm exp".
	out, err := exec.Command("bash", "-c", `source "$1"
COMP_WORDS=(ducklm open ru); COMP_CWORD=2; _ducklm; echo "${COMPREPLY[*]}"
COMP_WORDS=(ducklm exp); COMP_CWORD=1; _ducklm; echo "${COMPREPLY[*]}"`, "bash", script).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "runs\nexport\n", string(out))
}

// TestEveryCommandsHelpFlagPrintsItsUsageAndSucceeds is issue 27's
// `ducklm worker --help` (exit 2): --help, -h and -help, after any command
// or sub-command of `ducklm help`'s list, print its usage on stdout and exit
// 0, touching no data directory.
func TestEveryCommandsHelpFlagPrintsItsUsageAndSucceeds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "never")
	t.Setenv("DUCKLM_HOME", dir)
	var invocations [][]string
	groups := map[string]bool{} // the commands whose summary says "(ducklm NAME help)"
	for _, m := range regexp.MustCompile(`\(ducklm ([a-z]+) help\)`).FindAllStringSubmatch(ducklm(t, "help").stdout, -1) {
		groups[m[1]] = true
	}
	require.Len(t, groups, 4, "world, memory, gen, mcp")
	for _, name := range helpCommands(t) {
		invocations = append(invocations, []string{name})
		if !groups[name] {
			continue
		}
		group := ok(t, name, "help")
		for _, m := range regexp.MustCompile(`(?m)^  ducklm `+name+` ([a-z-]+) `).FindAllStringSubmatch(group.stdout, -1) {
			invocations = append(invocations, []string{name, m[1]})
		}
	}
	require.Contains(t, invocations, []string{"worker"})
	require.Contains(t, invocations, []string{"world", "step"})
	require.Contains(t, invocations, []string{"memory", "search"})
	require.Contains(t, invocations, []string{"mcp", "serve"})
	for _, inv := range invocations {
		for _, flag := range []string{"--help", "-h", "-help"} {
			args := append(append([]string{}, inv...), flag)
			r := ducklm(t, args...)
			require.Equal(t, 0, r.code, "ducklm %s: %s", strings.Join(args, " "), r.stderr)
			require.Empty(t, r.stderr, args)
			require.True(t, strings.HasPrefix(r.stdout, "usage: ducklm "+strings.Join(inv, " ")), "ducklm %s printed %q", strings.Join(args, " "), r.stdout)
			require.NotContains(t, r.stdout, "ducklm ducklm", args)
		}
	}
	_, err := os.Stat(dir)
	require.True(t, os.IsNotExist(err), "asking for help made no data directory")
}
