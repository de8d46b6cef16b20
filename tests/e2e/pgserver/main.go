// Command pgserver is the PostgreSQL of the team journeys: a throw-away
// cluster (backend/store/postgres/pgtest: initdb in a temporary folder, postgres
// on a free loopback port) with a database "ducklm" owned by the role that
// logs in with -password. It prints
// "pgserver listening on postgres://ducklm_password@127.0.0.1:PORT/ducklm?sslmode=disable"
// (without the password) and removes the cluster on SIGTERM or SIGINT.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	_ "github.com/jackc/pgx/v5/stdlib"

	"ducklm/backend/store/postgres/pgtest"
)

func main() {
	password := flag.String("password", "", "the password of the role that owns the database")
	flag.Parse()
	if *password == "" {
		fmt.Fprintln(os.Stderr, "pgserver: -password is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	c, err := pgtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgserver:", err)
		os.Exit(1)
	}
	addr, err := prepare(c.URL, *password)
	if err != nil {
		c.Stop()
		fmt.Fprintln(os.Stderr, "pgserver:", err)
		os.Exit(1)
	}
	fmt.Println("pgserver listening on " + addr)
	<-ctx.Done()
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "pgserver:", err)
		os.Exit(1)
	}
}

// prepare makes the role and its database, and returns the database's
// address as that role, without the password.
func prepare(admin, password string) (string, error) {
	db, err := sql.Open("pgx", admin)
	if err != nil {
		return "", err
	}
	defer db.Close()
	quoted := "'" + strings.ReplaceAll(password, "'", "''") + "'"
	for _, q := range []string{
		`CREATE ROLE ` + pgtest.PasswordRole + ` LOGIN PASSWORD ` + quoted,
		`CREATE DATABASE ducklm OWNER ` + pgtest.PasswordRole + ` TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`,
	} {
		if _, err := db.Exec(q); err != nil {
			return "", fmt.Errorf("%s: %w", strings.Fields(q)[1], err)
		}
	}
	u, err := url.Parse(admin)
	if err != nil {
		return "", err
	}
	u.User = url.User(pgtest.PasswordRole)
	u.Path = "/ducklm"
	return u.String(), nil
}
