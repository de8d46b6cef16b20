package web_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend/web"
)

func TestTheCardOfAFetchAndOfABrowserStep(t *testing.T) {
	t.Parallel()
	a, err := web.ParseArgs(json.RawMessage(`{"url":"http://192.168.1.9/api","method":"post","body":"{}","max_bytes":1000,"max_redirects":0,"timeout_seconds":600}`))
	require.NoError(t, err)
	p := a.Request(2*time.Minute, 1<<30).Describe()
	require.Equal(t, web.Plan{URL: "http://192.168.1.9/api", Host: "192.168.1.9", Method: "POST", BodyBytes: 2, MaxBytes: 1000,
		MaxRedirects: 0, TimeoutMS: 120000, Local: "private"}, p, "the step's time limit caps the args'")

	b := web.BrowserPlan(json.RawMessage(`{"url":"https://app.example/dash","wait_for":"#root"}`), 2*time.Minute)
	require.Equal(t, &web.Plan{URL: "https://app.example/dash", Host: "app.example", Method: "GET", TimeoutMS: 60000, Browser: true}, b)
	require.Nil(t, web.BrowserPlan(json.RawMessage(`{"url":"ftp://x"}`), 0))
}
