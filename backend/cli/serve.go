package cli

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"ducklm/backend"
	"ducklm/backend/api"
	"ducklm/backend/httpapi"
	"ducklm/backend/mcp"
	"ducklm/backend/service"
)

// assets is the built frontend that `ducklm serve` serves (main.go hands
// over the embedded frontend/dist).
var assets fs.FS

// SetAssets sets the frontend files `ducklm serve` serves: a folder with
// index.html at its root.
func SetAssets(fsys fs.FS) { assets = fsys }

func init() {
	register("serve", "serve the user interface to a browser on this machine", "serve [--addr 127.0.0.1:0] [--open] [--expose-to-network]", runServe)
}

// shutdownGrace bounds how long calls in flight may finish at shutdown.
const shutdownGrace = 5 * time.Second

func runServe(env Env, args []string) error {
	flags := newFlags("serve")
	addr := flags.String("addr", "127.0.0.1:0", "address to listen on")
	open := flags.Bool("open", false, "open the page in the default browser")
	expose := flags.Bool("expose-to-network", false, "listen beyond this machine")
	if hasHelpFlag(args) {
		fmt.Fprintln(env.Stdout, "usage: ducklm serve [--addr 127.0.0.1:0] [--open] [--expose-to-network]")
		fmt.Fprintln(env.Stdout, "    serve the user interface to a browser on this machine; the printed address holds the page's token")
		fmt.Fprintln(env.Stdout, "    --expose-to-network lets --addr be an address other machines reach: anyone who learns the token can run commands here")
		return nil
	}
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return usageError("usage: serve takes no arguments, but got %q", flags.Arg(0))
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		return usageError("usage: --addr is HOST:PORT (e.g. 127.0.0.1:8080, or 127.0.0.1:0 for any free port), not %q", *addr)
	}
	loopback := isLoopback(host)
	if !loopback && !*expose {
		return usageError("ducklm serve listens only on this machine: %s would let every machine that reaches this one try to run commands here; "+
			"use 127.0.0.1:PORT, or add --expose-to-network to take that risk", *addr)
	}
	if assets == nil {
		return backend.Errorf(backend.EUNAVAILABLE, "this ducklm was built without its user interface; run make build")
	}
	if _, err := fs.Stat(assets, "index.html"); err != nil {
		return backend.Errorf(backend.EUNAVAILABLE, "this ducklm was built without its user interface (frontend/dist has no index.html); run make build")
	}
	ctx := env.Ctx
	if ctx == nil {
		ctx = context.Background()
	}

	dir, err := service.DataDir()
	if err != nil {
		return err
	}
	// The window and the server are exclusive: one process drives the runs.
	lock, err := service.AcquireLock(dir)
	if err != nil {
		return err
	}
	defer lock.Release()
	log := slog.New(slog.NewTextHandler(env.Stderr, nil))
	svc, err := service.OpenWith(ctx, dir, service.Options{Log: log})
	if err != nil {
		return err
	}
	defer svc.Close()

	runCtx, stopRuns := context.WithCancel(ctx)
	defer stopRuns()
	if resumed, err := svc.StartRuntime(runCtx); err != nil {
		log.Error("resume runs", "err", err)
	} else if len(resumed) > 0 {
		log.Info("resumed runs", "runs", resumed)
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot listen on %s: %v", *addr, err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	if !loopback {
		fmt.Fprintf(env.Stderr, "warning: ducklm serve listens on %s, beyond this machine (--expose-to-network); anyone who learns the printed token can run commands here\n", ln.Addr())
	}
	token, err := httpapi.NewToken()
	if err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot make a token")
	}
	facade := api.New(svc, nil, log)
	// Calls start runs that outlive the request: they get the server's context.
	api.Configure(facade, func() context.Context { return runCtx }, nil)
	agents, err := mcp.New(mcp.Options{API: facade, Service: svc, Transport: mcp.TransportHTTP, Log: log})
	if err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot start the MCP endpoint")
	}
	opts := httpapi.Options{API: facade, Service: svc, Assets: assets, Token: token, Log: log, Hosts: allowedHosts(host, port),
		MCP: agents.HTTPHandler()}
	handler, err := httpapi.New(opts)
	if err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot start the server")
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		IdleTimeout: 2 * time.Minute, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	srv.RegisterOnShutdown(handler.Close)
	srv.RegisterOnShutdown(agents.Close)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	url := pageURL(host, port, token)
	fmt.Fprintf(env.Stdout, "ducklm serving on %s\n", url)
	fmt.Fprintf(env.Stdout, "MCP endpoint (streamable HTTP): %s\n", mcpURL(host, port, token))
	if *open {
		defer os.Remove(openPage(dir))
		if err := openBrowser(dir, url); err != nil {
			fmt.Fprintf(env.Stderr, "warning: cannot open a browser (%s); open the address above yourself\n", backend.ErrorMessage(err))
		}
	}

	select {
	case <-ctx.Done():
	case err := <-served:
		return backend.Wrap(err, backend.EUNAVAILABLE, "the server stopped: %v", err)
	}
	fmt.Fprintln(env.Stderr, "ducklm serve: stopping")
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		srv.Close()
	}
	stopRuns()
	return nil
}

// isLoopback reports whether a listen host stays on this machine ("" and
// 0.0.0.0 listen everywhere).
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// allowedHosts are the Host header values the server answers: this
// machine's loopback names, the host listened on, and when that is every
// address, this machine's name and its addresses. Anything else is a page
// that reached the server through another name (DNS rebinding).
func allowedHosts(host string, port int) []string {
	p := strconv.Itoa(port)
	names := []string{"127.0.0.1", "localhost", "::1"}
	ip := net.ParseIP(host)
	switch {
	case host == "" || (ip != nil && ip.IsUnspecified()):
		if name, err := os.Hostname(); err == nil && name != "" {
			names = append(names, name)
		}
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok {
					names = append(names, n.IP.String())
				}
			}
		}
	case host != "localhost":
		names = append(names, host)
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, net.JoinHostPort(n, p))
	}
	return out
}

// pageURL is the address a browser opens: the host listened on, or
// 127.0.0.1 when the server listens on every address.
func pageURL(host string, port int, token string) string {
	ip := net.ParseIP(host)
	if host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(port)) + "/?token=" + token
}

// mcpURL is the address of the MCP endpoint with the token in its path, for
// clients that can be given only a URL.
func mcpURL(host string, port int, token string) string {
	page := pageURL(host, port, token)
	return page[:strings.Index(page, "/?token=")] + httpapi.MCPPath + "/" + token
}

func openPage(dir string) string { return filepath.Join(dir, "serve-open.html") }

// openBrowser opens url in the default browser through a file that only
// this user can read, so the token never appears on a command line (which
// every user of the machine can list).
func openBrowser(dir, url string) error {
	page := openPage(dir)
	esc := html.EscapeString(url)
	doc := `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=` + esc + `"><title>ducklm</title>` +
		`<p><a href="` + esc + `">Open ducklm</a></p>`
	if err := os.WriteFile(page, []byte(doc), 0o600); err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot write %s", page)
	}
	cmd := exec.Command("xdg-open", page)
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return backend.Errorf(backend.EUNAVAILABLE, "xdg-open is not installed")
		}
		return backend.Wrap(err, backend.EUNAVAILABLE, "xdg-open failed")
	}
	go cmd.Wait()
	return nil
}
