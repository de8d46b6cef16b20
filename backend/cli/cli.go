// Package cli is ducklm's command line: one dispatch table over the same
// services the window uses. It runs headless (no Wails, no display); main.go
// sends every invocation with arguments here.
package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"ducklm/backend"
)

// Env is what a command runs with.
type Env struct {
	Ctx    context.Context
	Stdout io.Writer
	Stderr io.Writer
	Stdin  io.Reader
}

// Exit codes.
const (
	ExitOK    = 0
	ExitFail  = 1 // the command ran and found a problem
	ExitUsage = 2 // bad input: unknown command, bad flag, unknown id
	// ExitCancelled is a command the user stopped (Ctrl-C) before it
	// finished, as shells report an interrupted program.
	ExitCancelled = 130
)

type command struct {
	summary string
	usage   string // the invocation after "ducklm"
	run     func(env Env, args []string) error
	// group is a command of sub-commands (world, memory, gen): each of
	// them answers its own --help, and the group answers `NAME --help`.
	group bool
}

// commands is the one dispatch table; later capabilities add rows here.
var commands = map[string]command{}

func register(name, summary, usage string, run func(env Env, args []string) error) {
	commands[name] = command{summary: summary, usage: strings.TrimPrefix(usage, "ducklm "), run: run}
}

// registerGroup registers a command of sub-commands.
func registerGroup(name, summary, usage string, run func(env Env, args []string) error) {
	register(name, summary, usage, run)
	c := commands[name]
	c.group = true
	commands[name] = c
}

// errExit lets a command choose its exit code without printing an error.
type errExit struct{ code int }

func (e errExit) Error() string { return fmt.Sprintf("exit %d", e.code) }

// usageError is a bad invocation: it prints the sentence and the usage.
func usageError(format string, args ...any) error {
	return backend.Errorf(backend.EINVALID, format, args...)
}

// Run runs the command named by args[0] and returns the process exit code.
func Run(env Env, args []string) int {
	if len(args) == 2 && args[0] == "help" {
		switch args[1] {
		case "--man":
			printMan(env.Stdout)
			return ExitOK
		case "--bash":
			printBashCompletion(env.Stdout)
			return ExitOK
		}
	}
	if len(args) == 0 || args[0] == "help" || isHelpFlag(args[0]) {
		printHelp(env.Stdout)
		return ExitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.Stderr, "ducklm: unknown command %q. Run `ducklm help` for the list.\n", args[0])
		return ExitUsage
	}
	if !cmd.group && hasHelpFlag(args[1:]) {
		// Every command answers --help (and -h) with its usage, before it
		// parses anything or opens the data directory.
		fmt.Fprintf(env.Stdout, "usage: ducklm %s\n    %s\n", cmd.usage, cmd.summary)
		return ExitOK
	}
	err := cmd.run(env, args[1:])
	if err == nil {
		return ExitOK
	}
	if e, ok := err.(errExit); ok {
		return e.code
	}
	fmt.Fprintf(env.Stderr, "ducklm %s: %s\n", args[0], backend.ErrorMessage(err))
	switch backend.ErrorCode(err) {
	case backend.ECANCELLED:
		return ExitCancelled
	case backend.EINVALID, backend.ENOTFOUND:
		if cmd.usage != "" && strings.HasPrefix(backend.ErrorMessage(err), "usage") {
			fmt.Fprintf(env.Stderr, "usage: ducklm %s\n", cmd.usage)
		}
		return ExitUsage
	}
	return ExitFail
}
