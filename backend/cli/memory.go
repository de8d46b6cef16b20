package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"ducklm/backend"
	"ducklm/backend/memory"
	"ducklm/backend/memorypolicy"
	"ducklm/backend/service"
	"ducklm/backend/store"
)

// memoryCommands are the `ducklm memory` sub-commands. search, ls and show
// only read and never take the data directory lock.
var memoryCommands = []worldCommand{
	{name: "memory search", args: `"QUERY" [-k N] [--type T] [--json]`, summary: "find the memories most similar to a query, with their provenance", run: runMemorySearch, top: true},
	{name: "memory ls", args: "[--type T] [--limit N] [--json]", summary: "list memories, newest first", run: runMemoryLs, top: true},
	{name: "memory show", args: "ID [--json]", summary: "show one memory with every provenance merged into it", run: runMemoryShow, top: true},
	{name: "memory rm", args: "ID", summary: "delete a memory", write: true, run: runMemoryRm, top: true},
	{name: "memory reindex", args: "[--model NAME]", summary: "re-embed every memory with an Ollama embedding model or the built-in " + memory.HashModel +
		" (default: the embedder of the settings)", write: true, run: runMemoryReindex, top: true},
}

func init() {
	registerGroup("memory", "search, list, remove and re-embed memories (ducklm memory help)", memoryUsage(), runMemory)
}

func memoryUsage() string {
	var b strings.Builder
	b.WriteString("memory <command> [arguments]\n\nCommands:")
	for _, c := range memoryCommands {
		fmt.Fprintf(&b, "\n  %s\n      %s", c.usage(), c.summary)
	}
	b.WriteString("\n\nTypes: fact, observation, procedure, hypothesis, preference.")
	return b.String()
}

func runMemory(env Env, args []string) error {
	if len(args) == 0 {
		return usageError("usage: name a memory command (ducklm memory help lists them)")
	}
	if args[0] == "help" || isHelpFlag(args[0]) {
		fmt.Fprintf(env.Stdout, "usage: ducklm %s\n", memoryUsage())
		return nil
	}
	for _, c := range memoryCommands {
		if c.name == "memory "+args[0] {
			return c.exec(env, args[1:])
		}
	}
	return usageError("usage: unknown memory command %q", args[0])
}

// memories returns the registry on the open data directory.
func (s *session) memories() *store.Memories { return store.NewMemories(s.svc.DB, s.svc.Ledger) }

// memoryStore opens the memory store with the embedding model the index was
// last built with (the built-in one before any reindex); the session's
// service closes it.
func (s *session) memoryStore() (*memory.Store, error) { return s.svc.Memory(s.ctx) }

func (s *session) typeFlag(v string) (memorypolicy.Type, error) {
	t := memorypolicy.Type(v)
	if v != "" && !t.Valid() {
		return "", s.cmd.bad("--type is fact, observation, procedure, hypothesis or preference, not %q", v)
	}
	return t, nil
}

func runMemorySearch(s *session, args []string) error {
	fs := s.flags()
	k := fs.Int("k", 5, "")
	typ := fs.String("type", "", "")
	pos, err := s.parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	t, err := s.typeFlag(*typ)
	if err != nil {
		return err
	}
	if *k < 1 || *k > memory.MaxK {
		return s.cmd.bad("-k is 1 to %d, not %d", memory.MaxK, *k)
	}
	if strings.TrimSpace(pos[0]) == "" {
		return s.cmd.bad("the query is empty")
	}
	if err := s.open(); err != nil {
		return err
	}
	store, err := s.memoryStore()
	if err != nil {
		return err
	}
	found, err := store.Retrieve(s.ctx, pos[0], *k, memory.Filter{Type: t})
	if err != nil {
		return err
	}
	if found == nil {
		found = []memory.Retrieved{}
	}
	return s.out(found, func(w io.Writer) {
		if len(found) == 0 {
			fmt.Fprintln(w, "no memories yet")
			return
		}
		for _, r := range found {
			fmt.Fprintf(w, "%s  %.3f  %s  %s\n    %s\n", r.ID, r.Similarity, kindOf(r.Type, r.Provenance), source(r.Provenance), oneLine(r.Text, 300))
		}
	})
}

// kindOf names a memory's type, with the world of a hypothesis.
func kindOf(t memorypolicy.Type, p memory.Provenance) string {
	if p.Reality == backend.WorldLocal {
		return fmt.Sprintf("%s (simulated in %s)", t, p.WorldID)
	}
	return string(t)
}

func source(p memory.Provenance) string {
	if p.EventID == "" {
		return "from " + orDash(p.RunID)
	}
	return "from " + orDash(p.RunID) + " event " + p.EventID
}

func oneLine(s string, n int) string {
	return clip(strings.Join(strings.Fields(s), " "), n)
}

func runMemoryLs(s *session, args []string) error {
	fs := s.flags()
	typ := fs.String("type", "", "")
	limit := fs.Int("limit", 0, "")
	if _, err := s.parse(fs, args, 0, 0); err != nil {
		return err
	}
	t, err := s.typeFlag(*typ)
	if err != nil {
		return err
	}
	if *limit < 0 {
		return s.cmd.bad("--limit must not be negative")
	}
	if err := s.open(); err != nil {
		return err
	}
	// Listing reads the database alone: no index to load.
	list, err := s.memories().List(s.ctx, memory.ListQuery{Filter: memory.Filter{Type: t}, Limit: *limit})
	if err != nil {
		return err
	}
	if list == nil {
		list = []memory.Memory{}
	}
	return s.out(list, func(w io.Writer) {
		if len(list) == 0 {
			fmt.Fprintln(w, "no memories yet")
			return
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "MEMORY\tTYPE\tREALITY\tWEIGHT\tMERGED\tCREATED\tTEXT")
		for _, m := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%d\t%s\t%s\n", m.ID, m.Type, m.Provenance.Reality, m.Weight, m.MergedCount,
				m.CreatedAt.Local().Format(time.DateTime), oneLine(m.Text, 60))
		}
		tw.Flush()
	})
}

func runMemoryShow(s *session, args []string) error {
	fs := s.flags()
	id, err := s.parseID(fs, args, backend.KindMemory)
	if err != nil {
		return err
	}
	if err := s.open(); err != nil {
		return err
	}
	m, err := s.memories().Get(s.ctx, id)
	if err != nil {
		return err
	}
	return s.out(m, func(w io.Writer) {
		fmt.Fprintf(w, "memory: %s\ntype: %s\nweight: %.2f\nmerged: %d\nembedding: %s (%d dimensions)\ncreated: %s\n",
			m.ID, kindOf(m.Type, m.Provenance), m.Weight, m.MergedCount, m.Model, len(m.Vector), m.CreatedAt.Local().Format(time.DateTime))
		fmt.Fprintf(w, "text: %s\nsources:\n", m.Text)
		for _, src := range m.Sources {
			fmt.Fprintf(w, "  %s  %s  critic %.2f  worth %.2f  %s\n", src.AddedAt.Local().Format(time.DateTime),
				src.Reality, src.CriticScore, src.Worth, source(src.Provenance))
		}
	})
}

func runMemoryRm(s *session, args []string) error {
	fs := s.flags()
	id, err := s.parseID(fs, args, backend.KindMemory)
	if err != nil {
		return err
	}
	if err := s.open(); err != nil {
		return err
	}
	store, err := s.memoryStore()
	if err != nil {
		return err
	}
	if err := store.Remove(s.ctx, id); err != nil {
		return err
	}
	return s.out(map[string]string{"removed": id}, func(w io.Writer) { fmt.Fprintf(w, "removed: %s\n", id) })
}

// reindexOut is what `memory reindex` prints.
type reindexOut struct {
	Model       string `json:"model"`
	Previous    string `json:"previous"`
	Reembedded  int    `json:"reembedded"`
	Indexed     int    `json:"indexed"`
	DurationSec string `json:"duration"`
}

func runMemoryReindex(s *session, args []string) error {
	fs := s.flags()
	model := fs.String("model", "", "")
	if _, err := s.parse(fs, args, 0, 0); err != nil {
		return err
	}
	if err := s.open(); err != nil {
		return err
	}
	step := 0
	res, err := s.svc.ReindexMemories(s.ctx, service.ReindexOptions{Model: *model, Progress: func(phase string, done, total int) {
		// About ten progress lines however many memories there are.
		if phase == service.PhaseReindexEmbed && total > 0 && done*10/total > step && !s.json {
			step = done * 10 / total
			fmt.Fprintf(s.env.Stderr, "re-embedded %d of %d memories\n", done, total)
		}
	}})
	if err != nil {
		return err
	}
	out := reindexOut{Model: res.Model, Previous: res.Previous, Reembedded: res.Reembedded, Indexed: res.Indexed,
		DurationSec: res.Took.Round(time.Millisecond).String()}
	return s.out(out, func(w io.Writer) {
		fmt.Fprintf(w, "model: %s (was %s)\nre-embedded: %d\nindexed: %d\ntook: %s\n", out.Model, out.Previous, out.Reembedded, out.Indexed, out.DurationSec)
	})
}
