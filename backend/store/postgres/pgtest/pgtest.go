// Package pgtest gives tests a throw-away PostgreSQL: a cluster of Debian's
// postgresql package made with initdb in a temporary folder, served by its
// own postgres process on a free loopback port, and removed when the tests
// end. Each test gets a database of its own. Only tests import it.
//
// A test binary starts at most one cluster (the first test that asks) and
// stops it in its TestMain through Main. Without Debian's postgresql the
// test is skipped, or fails in CI (CI=true), through backend/prereq.
// DUCKLM_TEST_DATABASE_URL points the tests at an existing server instead
// (each test still creates and drops its own database there).
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver for database/sql

	"ducklm/backend/prereq"
)

// Cluster is a running throw-away PostgreSQL.
type Cluster struct {
	// URL reaches the cluster's postgres database as its superuser.
	URL  string
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

var (
	once    sync.Once
	shared  *Cluster
	failure error
	dbs     atomic.Int64
)

// URL returns the address of a new, empty database for t, dropped when t
// ends. The first call starts the cluster.
func URL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("DUCKLM_TEST_DATABASE_URL")
	if base == "" {
		once.Do(func() { shared, failure = Start() })
		if failure != nil {
			if errors.Is(failure, errNoPostgres) {
				prereq.Missing(t, "%v", failure)
			}
			t.Fatalf("cannot start a throw-away PostgreSQL: %v", failure)
		}
		base = shared.URL
	}
	name := fmt.Sprintf("ducklm_test_%d_%d", os.Getpid(), dbs.Add(1))
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("cannot reach the test PostgreSQL: %v", err)
	}
	defer admin.Close()
	if _, err := admin.Exec(`CREATE DATABASE ` + name + ` TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`); err != nil {
		t.Fatalf("cannot create a test database: %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer admin.Close()
		admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`)
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("bad test database address: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

// PasswordRole is the one role the throw-away cluster asks a password of.
const PasswordRole = "ducklm_password"

// PasswordURL returns the address of t's database (from URL) as
// PasswordRole, which logs in with password; the role is (re)created with
// that password and may create tables in the database.
func PasswordURL(t testing.TB, dbURL, password string) string {
	t.Helper()
	admin, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatalf("cannot reach the test PostgreSQL: %v", err)
	}
	defer admin.Close()
	quoted := "'" + strings.ReplaceAll(password, "'", "''") + "'"
	if _, err := admin.Exec(`DO $$ BEGIN
		IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '` + PasswordRole + `') THEN
			CREATE ROLE ` + PasswordRole + ` LOGIN;
		END IF; END $$`); err != nil {
		t.Fatalf("cannot create the password role: %v", err)
	}
	if _, err := admin.Exec(`ALTER ROLE ` + PasswordRole + ` PASSWORD ` + quoted); err != nil {
		t.Fatalf("cannot set the password role's password: %v", err)
	}
	if _, err := admin.Exec(`GRANT ALL ON SCHEMA public TO ` + PasswordRole); err != nil {
		t.Fatalf("cannot grant the password role its schema: %v", err)
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("bad test database address: %v", err)
	}
	u.User = url.UserPassword(PasswordRole, password)
	return u.String()
}

// Main runs the tests of a package and then stops the cluster they used:
// call it from TestMain as os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	Shutdown()
	return code
}

// Shutdown stops the cluster the tests of this binary started, if any; a
// TestMain that runs its own m.Run calls it after.
func Shutdown() {
	if shared != nil {
		if err := shared.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
		}
	}
}

var errNoPostgres = errors.New("Debian's postgresql package is not installed (initdb and postgres under /usr/lib/postgresql/*/bin); make test installs it")

// binDir finds the newest installed PostgreSQL's programs.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errNoPostgres
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Start makes and starts a cluster in a new temporary folder. PostgreSQL
// refuses to run as root: then the cluster runs as the postgres user the
// Debian package creates.
func Start() (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ducklm-pg-*")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, done: make(chan struct{}), log: filepath.Join(dir, "postgres.log")}
	fail := func(err error) (*Cluster, error) {
		c.Stop()
		return nil, err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fail(fmt.Errorf("PostgreSQL cannot run as root and there is no postgres user: %w", err))
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return fail(err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust",
		"--encoding=UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Env = append(os.Environ(), "LC_ALL=C")
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb failed: %v\n%s", err, out))
	}
	// Every role is trusted but PasswordRole, which must give its password:
	// tests of wrong passwords need a server that asks for one.
	hba := filepath.Join(data, "pg_hba.conf")
	rules, err := os.ReadFile(hba)
	if err != nil {
		return fail(err)
	}
	rules = append([]byte("host all "+PasswordRole+" 127.0.0.1/32 scram-sha-256\n"), rules...)
	if err := os.WriteFile(hba, rules, 0o600); err != nil {
		return fail(err)
	}
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return fail(err)
		}
		logf, err := os.OpenFile(c.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fail(err)
		}
		if cred != nil {
			os.Chown(c.log, int(cred.Uid), int(cred.Gid))
		}
		// Durability is not what these tests measure: fsync off keeps a
		// busy machine's test run short. Appends are still transactions.
		cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
			"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+dir,
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
			"-c", "max_connections=200", "-c", "shared_buffers=32MB")
		cmd.Stdout, cmd.Stderr = logf, logf
		// The server dies with the test binary, even when it is killed.
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
		if err := cmd.Start(); err != nil {
			logf.Close()
			return fail(fmt.Errorf("cannot start postgres: %w", err))
		}
		c.cmd = cmd
		c.done = make(chan struct{})
		go func() { cmd.Wait(); logf.Close(); close(c.done) }()
		c.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
		err = c.waitReady(90 * time.Second)
		if err == nil {
			return c, nil
		}
		logText, _ := os.ReadFile(c.log)
		if attempt < 3 && strings.Contains(string(logText), "could not bind") {
			continue // another process took the port between probe and bind
		}
		return fail(fmt.Errorf("postgres did not start: %v\n%s", err, logText))
	}
}

// waitReady waits until the server accepts a query, or exits.
func (c *Cluster) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-c.done:
			return errors.New("the server exited")
		default:
		}
		db, err := sql.Open("pgx", c.URL)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err = db.QueryRowContext(ctx, "SELECT 1").Err()
			cancel()
			db.Close()
			if err == nil {
				return nil
			}
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no answer within %s: %v", limit, last)
}

// Stop shuts the server down (fast shutdown, then a kill) and removes the
// cluster's folder.
func (c *Cluster) Stop() error {
	if c.cmd != nil && c.cmd.Process != nil {
		select {
		case <-c.done:
		default:
			c.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-c.done:
			case <-time.After(30 * time.Second):
				syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
				<-c.done
			}
		}
	}
	return os.RemoveAll(c.dir)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
