package doctor

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestChromiumCheckSaysWhereItIsOrHowToGetIt(t *testing.T) {
	t.Parallel()
	found := Env{LookPath: func(name string) (string, error) {
		if name == "chromium" {
			return "/usr/bin/chromium", nil
		}
		return "", errors.New("not found")
	}}
	c := chromium(found)
	require.Equal(t, OK, c.Status)
	require.Equal(t, "/usr/bin/chromium", c.Detail)

	missing := Env{LookPath: func(string) (string, error) { return "", errors.New("not found") }}
	c = chromium(missing)
	require.Equal(t, Warn, c.Status)
	require.Contains(t, c.Detail, "the browser tool")
	require.Equal(t, "sudo apt-get install chromium", c.Fix)
}
