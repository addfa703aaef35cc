package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/admin/adminclient"
	"github.com/lethe-privacy/lethe/config/ledgeropen"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgwing"
)

// ledgerCmd inspects the ledger the config points at.
func ledgerCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "counts" && args[0] != "subject") {
		fmt.Fprint(stderr, usageOf("ledger"))
		return 2
	}
	fs := newFlagSet("ledger "+args[0], "", stderr)
	path := fs.String("config", "", "configuration file")
	wait := fs.Duration("wait", 30*time.Second, "how long to wait for the WAL follower to record every row committed so far (0: not at all)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	fail := failer(stderr, "ledger")
	cfg, ok := loadConfig("ledger", *path, usageOf("ledger"), false, stderr)
	if !ok {
		return exitConfig
	}
	var subject string
	var hasher *ledger.Hasher
	var err error
	if args[0] == "subject" {
		if subject, err = adminclient.SubjectLine(stdin); err == nil && subject == "" {
			fmt.Fprintln(stderr, "lethe-proxy ledger subject: give the subject on stdin, e.g. `echo alice@example.com | lethe-proxy ledger subject --config FILE`")
			return 2
		}
		if err == nil {
			err = admin.CheckSubject(subject)
		}
		if err != nil {
			fmt.Fprintln(stderr, "lethe-proxy ledger subject:", err)
			return 2
		}
		hasher, err = ledgeropen.SubjectHasher()
	} else {
		hasher, err = ledgeropen.OptionalSubjectHasher() // counts hashes nothing, but is refused a wrong salt
	}
	if err != nil {
		return fail(1, "%v", err)
	}
	read := ledgeropen.Reader{Store: cfg.Capture.Ledger, ConfigPath: *path, Hasher: hasher}
	ctx := context.Background()
	if *wait > 0 { // so that a row written a moment ago is listed
		wctx, cancel := context.WithTimeout(ctx, *wait)
		if err := pgwing.AwaitFollower(wctx, cfg.Capture, read.Open, followerGrace); err != nil {
			fmt.Fprintf(stderr, "lethe-proxy ledger: warning: %v\n", err)
		}
		cancel()
	}
	// Each read opens the ledger after the wait: an SQLite ledger counts, at
	// open, the follower's changes still waiting to be written into its
	// index, and a reader drains only those it counted.
	if args[0] == "counts" {
		err = read.WriteCounts(ctx, stdout)
	} else {
		err = read.WriteSubject(ctx, subject, stdout)
	}
	if err != nil {
		return fail(1, "%v", err)
	}
	return 0
}

// followerGrace is how long the wait for the WAL follower gives a proxy
// that has just started to stream its slot.
const followerGrace = 3 * time.Second
