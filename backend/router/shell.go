package router

import (
	"slices"
	"strings"
)

// The command words the shell rules look for. Matching is on a word's base
// name (/usr/bin/curl is curl), case-insensitively.
var (
	networkCommands = set("curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "socat",
		"telnet", "ftp", "ping", "dig", "nslookup",
		// system package managers: every use may download
		"apt", "apt-get", "aptitude", "dnf", "yum", "pacman", "apk", "brew", "snap", "flatpak", "zypper")
	// networkSubcommands: the program reaches the network with one of these
	// subcommands anywhere after it in the same simple command.
	networkSubcommands = map[string][]string{
		"git":    {"clone", "fetch", "pull", "push", "ls-remote", "submodule"},
		"pip":    {"install", "download"},
		"pip3":   {"install", "download"},
		"npm":    {"install", "i", "ci", "add", "update"},
		"yarn":   {"install", "add"},
		"pnpm":   {"install", "i", "add"},
		"gem":    {"install"},
		"cargo":  {"install", "fetch"},
		"go":     {"get", "install", "download"},
		"uv":     {"add", "sync", "pip", "tool"},
		"docker": {"pull", "run", "build", "push"},
		"podman": {"pull", "run", "build", "push"},
	}
	privilegeCommands   = set("sudo", "su", "doas", "pkexec", "runuser")
	destructiveCommands = set("dd", "shred", "wipefs", "fdisk", "sfdisk", "parted", "blkdiscard",
		"shutdown", "reboot", "halt", "poweroff", "killall", "pkill")
	recursiveOwners = set("chmod", "chown", "chgrp")
	// harmlessDevices may be redirected into.
	harmlessDevices = set("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty")
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// findings are what a command does that the shell rules care about, each a
// short label ("rm -r", "curl", "git clone"), in order of appearance.
type findings struct {
	destructive, privilege, network []string
}

func (f *findings) add(list *[]string, label string) {
	if !slices.Contains(*list, label) {
		*list = append(*list, label)
	}
}

// scan applies the shell rules to a command.
func scan(command string) findings {
	var f findings
	segs, redirects := split(command, 0)
	for _, seg := range segs {
		for i, w := range seg {
			base := strings.ToLower(w[strings.LastIndexByte(w, '/')+1:])
			rest := seg[i+1:]
			switch {
			case networkCommands[base]:
				f.add(&f.network, base)
			case privilegeCommands[base]:
				f.add(&f.privilege, base)
			case destructiveCommands[base], strings.HasPrefix(base, "mkfs"), base == "mke2fs":
				f.add(&f.destructive, base)
			case base == "rm" && slices.ContainsFunc(rest, func(a string) bool { return isFlag(a, "recursive", 'r', 'R') }):
				f.add(&f.destructive, "rm -r")
			case recursiveOwners[base] && slices.ContainsFunc(rest, func(a string) bool { return isFlag(a, "recursive", 'R') }):
				f.add(&f.destructive, base+" -R")
			case base == "find" && slices.Contains(rest, "-delete"):
				f.add(&f.destructive, "find -delete")
			case base == "tee":
				for _, a := range rest {
					if isDevice(a) {
						f.add(&f.destructive, "tee "+a)
					}
				}
			}
			for _, sub := range networkSubcommands[base] {
				if slices.Contains(rest, sub) {
					f.add(&f.network, base+" "+sub)
				}
			}
		}
	}
	for _, r := range redirects {
		if isDevice(r) {
			f.add(&f.destructive, "> "+r)
		}
	}
	return f
}

// isDevice reports whether a word names a device that writing to may
// destroy data: anything under /dev/ but the harmless ones.
func isDevice(w string) bool {
	return strings.HasPrefix(w, "/dev/") && !harmlessDevices[w] && !strings.HasPrefix(w, "/dev/fd/")
}

// isFlag reports whether arg is the long flag --long or a group of short
// flags (-rf) holding one of the letters.
func isFlag(arg, long string, letters ...byte) bool {
	if arg == "--"+long {
		return true
	}
	if len(arg) < 2 || arg[0] != '-' || arg[1] == '-' {
		return false
	}
	for _, l := range letters {
		if strings.IndexByte(arg[1:], l) >= 0 {
			return true
		}
	}
	return false
}

// maxQuoteDepth bounds how deep quoted text is re-read as a command.
const maxQuoteDepth = 8

// split cuts a command into simple commands (words between ; | & ( ) ` { }
// and newlines) and collects the words written to by > redirects. Quotes
// join a word as the shell does (r'm' is rm), and the text inside every
// quote is read again as a command of its own, because it may be one
// (bash -c '...', ssh host '...', eval "..."). This is deliberately
// conservative: it also flags echo "rm -rf /".
func split(command string, depth int) (segs [][]string, redirects []string) {
	var (
		cur      strings.Builder
		inWord   bool
		seg      []string
		redirect bool
		quoted   []string
	)
	endWord := func() {
		if !inWord {
			return
		}
		w := cur.String()
		seg = append(seg, w)
		if redirect {
			redirects = append(redirects, w)
			redirect = false
		}
		cur.Reset()
		inWord = false
	}
	endSeg := func() {
		endWord()
		if len(seg) > 0 {
			segs = append(segs, seg)
		}
		seg = nil
	}
	rs := []rune(command)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; r {
		case ' ', '\t', '\r', '$', '<':
			endWord()
		case '>':
			endWord()
			redirect = true
		case ';', '|', '&', '(', ')', '`', '{', '}', '\n':
			endSeg()
		case '\\':
			if i+1 < len(rs) && rs[i+1] != '\n' {
				cur.WriteRune(rs[i+1])
				inWord = true
			}
			i++
		case '\'', '"':
			var text strings.Builder
			j := i + 1
			for ; j < len(rs) && rs[j] != r; j++ {
				if r == '"' && rs[j] == '\\' && j+1 < len(rs) {
					j++
				}
				text.WriteRune(rs[j])
			}
			cur.WriteString(text.String())
			inWord = true
			quoted = append(quoted, text.String())
			i = j
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	endSeg()
	if depth < maxQuoteDepth {
		for _, q := range quoted {
			s, r := split(q, depth+1)
			segs = append(segs, s...)
			redirects = append(redirects, r...)
		}
	}
	return segs, redirects
}
