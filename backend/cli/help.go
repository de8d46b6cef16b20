package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"ducklm/backend"
	"ducklm/backend/api"
)

// helpText is what `ducklm help` says, in parts, so the manual page and the
// shell completion are written from the same words and the same command table.
type helpText struct {
	title string      // one line: what ducklm is
	rows  [][2]string // usage rows: the invocation after "ducklm", and what it does
	notes []string    // the closing lines: data directory, Ollama
}

func help() helpText {
	h := helpText{
		title: "a local runtime for autonomous, multi-model tasks.",
		rows:  [][2]string{{"", "open the desktop window"}},
		notes: []string{
			"Data directory: $DUCKLM_HOME, else $XDG_DATA_HOME/ducklm, else ~/.local/share/ducklm.",
			"Ollama: $OLLAMA_HOST, else http://127.0.0.1:11434.",
		},
	}
	for _, n := range commandNames() {
		h.rows = append(h.rows, [2]string{n, commands[n].summary})
	}
	return h
}

func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func printHelp(w io.Writer) {
	h := help()
	fmt.Fprintf(w, "ducklm %s: %s\n\n", backend.Version, h.title)
	fmt.Fprintln(w, "Usage:")
	for _, r := range h.rows {
		if r[0] == "" {
			fmt.Fprintf(w, "  ducklm                 %s\n", r[1])
			continue
		}
		fmt.Fprintf(w, "  ducklm %-15s %s\n", r[0], r[1])
	}
	fmt.Fprintln(w)
	for _, n := range h.notes {
		fmt.Fprintln(w, n)
	}
}

// roff escapes text for a man page: backslashes, and a leading dot or
// apostrophe that roff would read as a request.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// printMan writes ducklm.1, the manual page, from the help text and the
// usage of each command (`ducklm help --man`).
func printMan(w io.Writer) {
	h := help()
	fmt.Fprintf(w, ".TH DUCKLM 1 \"\" \"ducklm %s\" \"User Commands\"\n", roff(backend.Version))
	fmt.Fprintf(w, ".SH NAME\nducklm \\- %s\n", roff(strings.TrimSuffix(h.title, ".")))
	fmt.Fprintln(w, ".SH SYNOPSIS")
	fmt.Fprintln(w, ".B ducklm")
	fmt.Fprintln(w, ".br")
	fmt.Fprintln(w, ".B ducklm")
	fmt.Fprintln(w, ".I command")
	fmt.Fprintln(w, "[\\fIarguments\\fR]")
	fmt.Fprintln(w, ".SH DESCRIPTION")
	fmt.Fprintf(w, "ducklm is %s\n", roff(h.title))
	fmt.Fprintln(w, "With no arguments it opens the desktop window; with a command it runs that command")
	fmt.Fprintln(w, "on the command line, over the same data the window uses.")
	fmt.Fprintln(w, ".SH COMMANDS")
	for _, r := range h.rows {
		if r[0] == "" {
			continue
		}
		usage := strings.TrimPrefix(commands[r[0]].usage, "ducklm ")
		if usage == "" {
			usage = r[0]
		}
		first, rest, _ := strings.Cut(usage, "\n")
		fmt.Fprintf(w, ".TP\n.B ducklm %s\n%s\n", roff(first), roff(r[1]))
		if rest = strings.Trim(rest, "\n"); rest != "" {
			// A usage of several lines (a command with subcommands) keeps its layout.
			fmt.Fprintln(w, ".RS\n.nf")
			for _, line := range strings.Split(rest, "\n") {
				fmt.Fprintln(w, roff(line))
			}
			fmt.Fprintln(w, ".fi\n.RE")
		}
	}
	fmt.Fprintln(w, ".TP\n.B ducklm help\nprint the list of commands (this page, in short)")
	fmt.Fprintln(w, ".SH ENVIRONMENT")
	for _, n := range h.notes {
		fmt.Fprintf(w, ".PP\n%s\n", roff(n))
	}
	fmt.Fprintln(w, ".SH EXIT STATUS")
	fmt.Fprintf(w, "%d when the command succeeded, %d when it ran and found a problem, %d for bad input (an unknown command, flag or id), %d when it was cancelled (Ctrl-C) before it finished.\n",
		ExitOK, ExitFail, ExitUsage, ExitCancelled)
}

// printBashCompletion writes a bash completion script for the commands of
// the table and the screens `ducklm open` takes (`ducklm help --bash`).
func printBashCompletion(w io.Writer) {
	names := append(commandNames(), "help")
	fmt.Fprintf(w, `# bash completion for ducklm (written by `+"`ducklm help --bash`"+`)
_ducklm() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W %q -- "$cur"))
    elif [ "$COMP_CWORD" -eq 2 ] && [ "${COMP_WORDS[1]}" = open ]; then
        COMPREPLY=($(compgen -W %q -- "$cur"))
    fi
}
complete -o default -F _ducklm ducklm
`, strings.Join(names, " "), strings.Join(api.OpenScreens(), " "))
}
