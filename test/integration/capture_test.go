//go:build integration

package integration

import (
	"bytes"
	"context"
	"path/filepath"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgcapture"
	"github.com/lethe-privacy/lethe/proxy/pgwire/walfollow"
)

// captured is a proxy with capture enabled over an SQLite ledger.
type captured struct {
	*proxy
	capture  *capture.Capture
	ledger   ledger.Ledger
	hasher   *ledger.Hasher
	observer *pgcapture.Observer
	wal      *walCheck
}

var testSalt = bytes.Repeat([]byte("lethe-test-salt!"), 2) // 32 bytes

// startCaptureProxy starts a relay whose observer tags writes to the
// tables of rules into a fresh SQLite ledger; adjust may change the
// PostgreSQL adapter's configuration first.
func startCaptureProxy(t *testing.T, db testDB, mode capture.Mode, rules []extract.Rule, adjust ...func(*pgcapture.Config)) *captured {
	t.Helper()
	compiled, err := extract.NewRules(rules)
	require.NoError(t, err)
	l, err := ledger.OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	h, err := ledger.NewHasher(testSalt)
	require.NoError(t, err)
	recent := capture.NewRecent(0)
	c := capture.New(capture.Config{Rules: compiled, Ledger: l, Hasher: h, Mode: mode, ConfirmHold: testConfirmHold, Recent: recent})
	var cfg pgcapture.Config
	for _, f := range adjust {
		f(&cfg)
	}
	t.Cleanup(func() { c.Close(); l.Close() })
	wal := checkWithWAL(t, db, compiled, l, h, recent)
	o := pgcapture.New(c, cfg)
	p := startProxy(t, db, func(s *pgwire.Server) { s.Observer = o })
	return &captured{proxy: p, capture: c, ledger: l, hasher: h, observer: o, wal: wal}
}

// walCheck is the WAL follower beside a test's capture.
type walCheck struct {
	follower *walfollow.Follower
	expected atomic.Int64 // disagreements the test makes on purpose
}

// expectDisagreements says the test writes n rows the proxy tags with
// other subjects than the server stores, and why (a trigger that rewrites
// the subject, say): the follower tags them as stored.
func (w *walCheck) expectDisagreements(n int64, why string) { w.expected.Add(n) }

// checkWithWAL runs a WAL follower beside a test's capture and checks,
// when the test ends, that every committed row the proxy tagged was
// tagged with the subjects the server stored: the proxy's reading of each
// write the test made, held to the server's. Rows of tables created after
// the follower started are checked once it has published them (it looks
// every 200 ms).
func checkWithWAL(t *testing.T, db testDB, rules *extract.Rules, l ledger.Ledger, h *ledger.Hasher, recent *capture.Recent) *walCheck {
	t.Helper()
	slot := walSlot(t, db)
	core := capture.New(capture.Config{Rules: rules, Ledger: l, Observer: l.(ledger.Observer), Hasher: h})
	t.Cleanup(core.Close)
	fl, err := walfollow.New(walfollow.Config{
		ConnString: db.URL(db.Addr(), "sslmode=disable"), Name: slot, Rules: rules, Core: core, Ledger: l.(ledger.Observer),
		Recent: recent, FlushInterval: 20 * time.Millisecond, RefreshInterval: 200 * time.Millisecond,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	require.NoError(t, fl.Prepare(ctx))
	cancel()
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); fl.Run(ctx) }()
	w := &walCheck{follower: fl}
	t.Cleanup(func() {
		awaitFollowed(t, db, slot)
		cancel()
		<-done
		st := &fl.Stats
		t.Logf("WAL check: %d rows agree with the proxy's tags, %d were not tagged by it, %d disagree", st.Agreed.Load(), st.NotSeen.Load(), st.Disagreed.Load())
		require.Equal(t, w.expected.Load(), st.Disagreed.Load(), "committed rows whose stored subjects differ from the proxy's tags (the follower logs their tables)")
	})
	return w
}

// testConfirmHold is how long the in-process captures hold confirmations:
// short, so that tests see them confirmed at once (the binary keeps
// capture.DefaultConfirmHold).
const testConfirmHold = 10 * time.Millisecond

// confirmed waits for the asynchronous confirmations to settle and returns
// the record ids of table confirmed for subject (sorted; "" for
// database-generated ids).
func (c *captured) confirmed(t *testing.T, table, subject string) []string {
	t.Helper()
	var ids []string
	for range 100 {
		recs, err := c.ledger.BySubject(context.Background(), c.hasher.Hash(subject))
		require.NoError(t, err)
		ids = ids[:0]
		pending := 0
		for _, r := range recs {
			if r.Table != table {
				continue
			}
			switch r.State {
			case ledger.StateConfirmed:
				ids = append(ids, r.RecordID)
			case ledger.StatePending:
				pending++
			}
		}
		if pending == 0 && len(ids) > 0 {
			sort.Strings(ids)
			return ids
		}
		time.Sleep(20 * time.Millisecond)
	}
	return ids
}

func shapeRules() []extract.Rule {
	var rules []extract.Rule
	for _, sh := range writeShapes {
		subj, err := extract.ParseSubject(sh.subject)
		if err != nil {
			panic(err)
		}
		rules = append(rules, extract.Rule{Table: sh.table, ID: sh.idColumn, Subjects: []extract.Subject{subj}})
	}
	return rules
}

// TestCapture_TagsEveryRealClientShape runs each library's write shape
// through the capturing proxy and checks that every committed row is in the
// ledger under its subject: by id where the client chose ids, by (table,
// subject) where the database generated them.
func TestCapture_TagsEveryRealClientShape(t *testing.T) {
	db := loadTestDB(t)
	shapeCheckTools(t)
	extExec(t, db, "CREATE EXTENSION IF NOT EXISTS vector")
	t.Cleanup(func() { shapeDropVecsSchema(t, db) })
	c := startCaptureProxy(t, db, capture.Strict, shapeRules())
	for _, sh := range writeShapes {
		t.Run(sh.name, func(t *testing.T) {
			shapeDropTables(t, db, sh)
			t.Cleanup(func() { shapeDropTables(t, db, sh) })
			sh.run(t, db, c.Addr)
			inTable := shapeState(t, db, sh)
			require.Len(t, inTable, len(shapeSubjects))
			for _, subject := range shapeSubjects {
				got := c.confirmed(t, sh.table, subject)
				require.NotEmpty(t, got, "%s: no confirmed tag for %s", sh.name, subject)
				if sh.clientIDs {
					require.Equal(t, inTable[subject], got, "%s: tagged ids for %s", sh.name, subject)
				}
			}
		})
	}
}
