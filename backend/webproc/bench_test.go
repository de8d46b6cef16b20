package webproc

import (
	"context"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"ducklm/backend"
	"ducklm/backend/bwrap"
	"ducklm/backend/web"
	"ducklm/backend/webhost"
)

// BenchmarkFetch is one web_fetch's fetch and text, in this process (as
// before the web worker) and in a worker, sandboxed and not, for a small
// page (2 KB) and a large one (1 MB): the worker's cost per fetch is its
// start (bubblewrap's namespaces, the executable's start) and the body's
// trip through a pipe.
//
// DUCKLM_BENCH_BIN names a built ducklm (make build) to start as the
// worker as well: the desktop binary loads GTK and WebKit's libraries at
// every start, which the test binary does not.
//
//	DUCKLM_BENCH_BIN=$PWD/build/bin/ducklm go test -run '^$' -bench BenchmarkFetch -benchtime 40x ./backend/webproc/
func BenchmarkFetch(b *testing.B) {
	para := "<p>Version 2.4 reads web pages in a worker process, which a hostile page can bloat or stall without touching ducklm.</p>\n"
	pages := map[string]string{
		"2KB": "<html><head><title>Notes</title></head><body><article>" + strings.Repeat(para, 16) + "</article></body></html>",
		"1MB": "<html><head><title>Notes</title></head><body><article>" + strings.Repeat(para, 8000) + "</article></body></html>",
	}
	for _, size := range []string{"2KB", "1MB"} {
		s := serveOn(b, "127.0.0.1", pages[size])
		_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
		n := publicNet(map[string]string{"news.test": "127.0.0.1"})
		g := webhost.Grant{}.Add("news.test")
		req := web.Request{URL: "http://news.test:" + port + "/"}
		lim := backend.Limits{Timeout: time.Minute}
		b.Run(size+"/here", func(b *testing.B) {
			defer cpuPerOp(b)()
			for b.Loop() {
				resp, err := n.Fetch(context.Background(), g, req)
				if err != nil {
					b.Fatal(err)
				}
				if web.Extract(resp.Body, resp.ContentType, resp.FinalURL).Text == "" {
					b.Fatal("no text")
				}
			}
		})
		exes := []string{""}
		if bin := os.Getenv("DUCKLM_BENCH_BIN"); bin != "" {
			exes = append(exes, bin)
		}
		for _, exe := range exes {
			for _, sandboxed := range []bool{false, true} {
				name := size + "/worker"
				if sandboxed {
					if _, ok, _ := bwrap.Available(); !ok {
						continue
					}
					name += "-bwrap"
				}
				if exe != "" {
					name += "-desktop"
				}
				benchWorker(b, name, &Fetcher{Net: n, exe: exe}, g, req, lim, sandboxed)
			}
		}
	}
}

func benchWorker(b *testing.B, name string, f *Fetcher, g webhost.Grant, req web.Request, lim backend.Limits, sandboxed bool) {
	b.Run(name, func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			page, err := f.Fetch(context.Background(), g, req, lim, sandboxed)
			if err != nil {
				b.Fatal(err)
			}
			if page.Text.Text == "" {
				b.Fatal("no text: " + page.TextError)
			}
		}
	})
}

// cpuPerOp reports the CPU time (user and system, this process and the
// workers it waited for) of each op, which a loaded machine's wall clock
// does not measure: call it before the loop, and its result after. A
// worker under bubblewrap is not this process's child (bubblewrap's own
// init reaps it), so the -bwrap runs' figure is ducklm's share alone.
func cpuPerOp(b *testing.B) func() {
	cpu := func() time.Duration {
		var self, children syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
		_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
		tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
		return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
	}
	start := cpu()
	return func() {
		b.ReportMetric(float64((cpu()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
}
