package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"ducklm/backend"
)

// Channel is the LISTEN/NOTIFY channel every append announces its ledger
// position on, at its commit.
const Channel = "ducklm_ledger"

// Since is what Follow reads of the ledger.
type Since interface {
	Since(ctx context.Context, after int64, limit int) ([]backend.Event, error)
	Count(ctx context.Context) (int64, error)
}

// followPage is how many events Follow reads at a time.
const followPage = 2000

// Follow hands publish, in position order, what is committed to the ledger
// at rawURL after the moment it starts, whichever process committed it
// (this process's appends come again: subscribers of the bus drop what they
// have delivered). It listens on Channel and reads the ledger from where it
// stopped on every announcement, so nothing is lost between them, nor over
// a lost connection (it reconnects, then reads what it missed). It returns
// when ctx ends.
func Follow(ctx context.Context, rawURL string, ledger Since, publish func([]backend.Event)) {
	at, err := ledger.Count(ctx)
	for err != nil {
		if !backend.Sleep(ctx, time.Second) {
			return
		}
		at, err = ledger.Count(ctx)
	}
	catchUp := func() {
		for {
			events, err := ledger.Since(ctx, at, followPage)
			if err != nil || len(events) == 0 {
				return
			}
			publish(events)
			at = events[len(events)-1].Pos
			if len(events) < followPage {
				return
			}
		}
	}
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		conn, err := pgx.Connect(ctx, rawURL)
		if err == nil {
			if _, err = conn.Exec(ctx, "LISTEN "+Channel); err == nil {
				backoff = 100 * time.Millisecond
				catchUp() // what was committed while no one listened
				for {
					n, err := conn.WaitForNotification(ctx)
					if err != nil {
						break
					}
					if pos, perr := strconv.ParseInt(n.Payload, 10, 64); perr == nil && pos <= at {
						continue // already read
					}
					catchUp()
				}
			}
			conn.Close(context.Background())
		}
		if !backend.Sleep(ctx, backoff) {
			return
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}
