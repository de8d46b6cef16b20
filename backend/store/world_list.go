package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"ducklm/backend"
)

// A world list reads one page with one query: the page's worlds are chosen
// first (a sort of the specs alone), then each one's run and fork counts,
// newest run and fork are read for those only. Keyset paging on
// (created_at, id) keeps a page the same when worlds are added meanwhile.
var worldListSelect = `
SELECT s.id, s.name, s.domain, COALESCE(s.parent_world_id, ''), s.created_at,
       (SELECT count(*) FROM world_runs r WHERE r.world_id = s.id),
       (SELECT count(*) FROM world_specs k WHERE k.parent_world_id = s.id),
       (SELECT count(*) FROM world_specs k WHERE k.parent_world_id = s.id AND ` + branchTest("k") + `),
       COALESCE(lr.id, ''), COALESCE(lr.status, ''), COALESCE(lr.world_local_time, 0), COALESCE(lr.deliberation_index, 0),
       COALESCE(f.id, ''), COALESCE(f.divergence_type, ''), COALESCE(c.world_local_time, 0)
FROM (SELECT * FROM world_specs s%s ORDER BY s.created_at DESC, s.id DESC LIMIT ?) s
LEFT JOIN world_runs lr ON lr.id = (SELECT r.id FROM world_runs r WHERE r.world_id = s.id ORDER BY r.created_at DESC, r.id DESC LIMIT 1)
LEFT JOIN forks f ON f.child_world_id = s.id
LEFT JOIN checkpoints c ON c.id = f.checkpoint_id
ORDER BY s.created_at DESC, s.id DESC`

// branchTest holds for the world w (a table alias) of a deliberation
// branch, as backend.BranchRound defines one: the greatest deliberation
// index of its runs is above 0, which is when a run of its serves a round.
// The list's select counts a world's branches (k) with the same test.
func branchTest(w string) string {
	return "EXISTS (SELECT 1 FROM world_runs b WHERE b.world_id = " + w + ".id AND b.deliberation_index > 0)"
}

// isBranch is branchTest on the listed world s.
var isBranch = branchTest("s")

// Page sizes of a world list.
const (
	DefaultWorldPage = 100
	MaxWorldPage     = 500
)

// ListWorlds returns a page of the worlds q selects, newest first, with the
// number of all of them.
func (w *Worlds) ListWorlds(ctx context.Context, q backend.WorldQuery) (backend.WorldPage, error) {
	limit := q.Limit
	switch {
	case limit == 0:
		limit = DefaultWorldPage
	case limit < 0 || limit > MaxWorldPage:
		return backend.WorldPage{}, backend.Errorf(backend.EINVALID, "a page of worlds holds 1 to %d worlds, not %d", MaxWorldPage, limit)
	}
	where, args, total, branches, err := w.countWorlds(ctx, q)
	if err != nil {
		return backend.WorldPage{}, err
	}
	cond := ""
	if q.After != "" {
		at, id, err := parseWorldCursor(q.After)
		if err != nil {
			return backend.WorldPage{}, err
		}
		where = append(where, "(s.created_at < ? OR (s.created_at = ? AND s.id < ?))")
		args = append(args, at, at, id)
	}
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := w.db.SQL.QueryContext(ctx, w.db.Rebind(fmt.Sprintf(worldListSelect, cond)), append(args, limit+1)...)
	if err != nil {
		return backend.WorldPage{}, dbErr(err, "list worlds")
	}
	defer rows.Close()
	page := backend.WorldPage{Worlds: make([]backend.WorldSummary, 0, min(limit, 64)), Total: total, Branches: branches}
	var lastAt int64
	for rows.Next() {
		if len(page.Worlds) == limit { // one more than the page: there is a next
			page.Next = worldCursor(lastAt, page.Worlds[limit-1].ID)
			break
		}
		var s backend.WorldSummary
		var created int64
		var run backend.RunSummary
		var fork backend.ForkSummary
		var domain, status, divergence string
		if err := rows.Scan(&s.ID, &s.Name, &domain, &s.Parent, &created, &s.Runs, &s.Forks, &s.Branches,
			&run.ID, &status, &run.WorldLocalTime, &run.DeliberationIndex, &fork.ID, &divergence, &fork.At); err != nil {
			return backend.WorldPage{}, dbErr(err, "list worlds")
		}
		s.Domain, s.CreatedAt = backend.Domain(domain), fromMicros(created)
		if run.ID != "" {
			run.Status = backend.RunStatus(status)
			s.LatestRun = &run
		}
		if fork.ID != "" {
			fork.Divergence = backend.DivergenceType(divergence)
			s.Fork = &fork
		}
		page.Worlds = append(page.Worlds, s)
		lastAt = created
	}
	if err := rows.Err(); err != nil {
		return backend.WorldPage{}, dbErr(err, "list worlds")
	}
	return page, nil
}

// CountWorlds counts the worlds q selects (its page aside): total as
// ListWorlds gives it, and the deliberation branches it left out
// (WithoutBranches).
func (w *Worlds) CountWorlds(ctx context.Context, q backend.WorldQuery) (total, branches int, err error) {
	_, _, total, branches, err = w.countWorlds(ctx, q)
	return total, branches, err
}

// countWorlds returns the conditions that select q's worlds (its page
// aside) with their arguments, and how many worlds they select, as
// CountWorlds says.
func (w *Worlds) countWorlds(ctx context.Context, q backend.WorldQuery) (where []string, args []any, total, branches int, err error) {
	switch q.Domain {
	case "":
	case backend.DomainReal, backend.DomainSimulated:
		where, args = append(where, "s.domain = ?"), append(args, string(q.Domain))
	default:
		return nil, nil, 0, 0, backend.Errorf(backend.EINVALID, "domain %q is neither real nor simulated", q.Domain)
	}
	if q.Parent != "" {
		if err := backend.CheckID(q.Parent, backend.KindWorld); err != nil {
			return nil, nil, 0, 0, err
		}
		where, args = append(where, "s.parent_world_id = ?"), append(args, q.Parent)
	}
	if text := strings.TrimSpace(q.Text); text != "" {
		where = append(where, "("+w.db.dialect.Contains("lower(s.name)", "lower(?)")+` OR s.id LIKE ? ESCAPE '\')`)
		args = append(args, text, idPattern(text))
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	if err = w.db.SQL.QueryRowContext(ctx, w.db.Rebind("SELECT count(*), COALESCE(sum(CASE WHEN "+isBranch+" THEN 1 ELSE 0 END), 0) FROM world_specs s"+cond),
		args...).Scan(&total, &branches); err != nil {
		return nil, nil, 0, 0, dbErr(err, "count worlds")
	}
	if q.WithoutBranches {
		total -= branches
		where = append(where, "NOT "+isBranch)
	} else {
		branches = 0
	}
	return where, args, total, branches, nil
}

// idPattern is the LIKE pattern for ids a search text names: any id that
// contains it, or, for a shortened id as the window shows it
// ("world_…c2a47b3d"), any id with that start and end.
func idPattern(text string) string {
	esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	if head, tail, ok := strings.Cut(text, "…"); ok {
		return esc.Replace(head) + "%" + esc.Replace(tail)
	}
	return "%" + esc.Replace(text) + "%"
}

func worldCursor(createdMicros int64, id string) string {
	return strconv.FormatInt(createdMicros, 10) + ":" + id
}

func parseWorldCursor(c string) (int64, string, error) {
	at, id, ok := strings.Cut(c, ":")
	micros, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || backend.CheckID(id, backend.KindWorld) != nil {
		return 0, "", backend.Errorf(backend.EINVALID, "%q is not where a world list stopped; start the list again", c)
	}
	return micros, id, nil
}
