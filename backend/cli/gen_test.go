package cli_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/cli"
	"ducklm/backend/service"
)

func TestGenLineageForksGenuineWorlds(t *testing.T) {
	dir := home(t)
	r := ok(t, "gen", "lineage", "--worlds", "40", "--trees", "3", "--json")
	var out struct{ Worlds, Forks, Trees int }
	r.decode(t, &out)
	require.Equal(t, 40, out.Worlds)
	require.Equal(t, 37, out.Forks)

	svc, err := service.Open(context.Background(), dir)
	require.NoError(t, err)
	defer svc.Close()
	l, err := svc.Worlds.Lineage(context.Background())
	require.NoError(t, err)
	require.Len(t, l.Nodes, 40)
	require.Len(t, l.Edges, 37)
	roots := 0
	for _, n := range l.Nodes {
		if n.World.ParentWorldID == "" {
			roots++
		}
	}
	require.Equal(t, 3, roots)
	// A generated branch is a real fork: it re-executes through its chain.
	last := l.Nodes[len(l.Nodes)-1]
	require.NotNil(t, last.LatestRun)
	rep, err := svc.Worlds.Verify(context.Background(), last.LatestRun.ID)
	require.NoError(t, err)
	require.True(t, rep.OK, "%+v", rep.Divergence)
}

func TestGenEventsGrowsAForkedHistory(t *testing.T) {
	dir := home(t)
	r := ok(t, "gen", "events", "--events", "5000", "--prefix", "300", "--json")
	var out struct {
		Run               string
		Events, Inherited int64
	}
	r.decode(t, &out)
	require.GreaterOrEqual(t, out.Events, int64(5000))
	require.Less(t, out.Events, int64(5000+10))
	require.GreaterOrEqual(t, out.Inherited, int64(300))

	svc, err := service.Open(context.Background(), dir)
	require.NoError(t, err)
	defer svc.Close()
	p, err := svc.Worlds.HistoryPage(context.Background(), out.Run, 0, 1)
	require.NoError(t, err)
	require.Equal(t, out.Events, p.Total)
	require.Equal(t, out.Inherited, p.Inherited)
	cps, err := svc.Worlds.Checkpoints(context.Background(), out.Run)
	require.NoError(t, err)
	require.NotEmpty(t, cps)
	rep, err := svc.Worlds.Verify(context.Background(), out.Run)
	require.NoError(t, err)
	require.True(t, rep.OK, "%+v", rep.Divergence)
}

func TestGenRefusesBadSizes(t *testing.T) {
	home(t)
	r := ducklm(t, "gen", "lineage", "--worlds", "0")
	require.Equal(t, cli.ExitUsage, r.code)
	require.Contains(t, r.stderr, "--worlds is 1 to 1000000")
	r = ducklm(t, "gen", "events", "--events", "100", "--prefix", "100")
	require.Equal(t, cli.ExitUsage, r.code)
	require.Contains(t, r.stderr, "--prefix")
	r = ducklm(t, "gen", "nothing")
	require.Equal(t, cli.ExitUsage, r.code)
}
