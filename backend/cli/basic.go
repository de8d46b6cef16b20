package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"

	"ducklm/backend"
	"ducklm/backend/doctor"
	"ducklm/backend/service"
	"ducklm/backend/store"
)

func init() {
	register("version", "print the version", "version", runVersion)
	register("doctor", "check the data directory, schema, WebKit, bubblewrap and Ollama", "doctor [--json]", runDoctor)
}

func runVersion(env Env, args []string) error {
	fmt.Fprintf(env.Stdout, "ducklm %s (%s, schema %d)\n", backend.Version, runtime.Version(), store.LatestSchemaVersion())
	return nil
}

func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return usageError("usage: %v", err)
	}
	return nil
}

func runDoctor(env Env, args []string) error {
	fs := newFlags("doctor")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	dir, err := service.DataDir()
	if err != nil {
		return err
	}
	// The doctor reads the schema without migrating: it must not change a
	// data directory it is only asked to look at.
	schema := func(ctx context.Context) (int64, int64, error) {
		have, err := store.PeekSchemaVersion(ctx, service.DatabasePath(dir))
		return have, store.LatestSchemaVersion(), err
	}
	checks := doctor.Run(env.Ctx, doctor.DefaultEnv(dir, schema))
	failed := false
	for _, c := range checks {
		failed = failed || c.Status == doctor.Fail
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(checks); err != nil {
			return err
		}
	} else {
		for _, c := range checks {
			mark := map[string]string{doctor.OK: "ok  ", doctor.Warn: "warn", doctor.Fail: "FAIL"}[c.Status]
			fmt.Fprintf(env.Stdout, "[%s] %s: %s\n", mark, c.Name, c.Detail)
			if c.Fix != "" {
				fmt.Fprintf(env.Stdout, "       fix: %s\n", c.Fix)
			}
		}
	}
	if failed {
		return errExit{ExitFail}
	}
	return nil
}
