package ledger

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// ownerBackend is a backend as the owner contract needs it: handles opened
// with chosen options on one store, the names in its owners table, and a
// way to kill a handle without Close.
type ownerBackend struct {
	// shared: several live handles may use one store, told apart by
	// leases (PostgreSQL); otherwise the store serves one handle at a
	// time and every other handle is gone (SQLite).
	shared   bool
	newStore func(t *testing.T) (open func(t *testing.T, o Options) Ledger, owners func(t *testing.T) []string)
}

// crash stops the handle as kill -9 would: no lease renewal, no removal
// from owners, nothing resolved.
func crash(l Ledger) {
	switch l := l.(type) {
	case *SQLite:
		l.decisions.close()
		for _, st := range l.stmts {
			st.Close()
		}
		l.readers.Close()
		l.writer.Close()
	case *Postgres:
		l.owner.stopRenewing()
		l.decisions.close()
		l.pool.Close()
	}
}

var sqliteOwners = ownerBackend{
	newStore: func(t *testing.T) (func(t *testing.T, o Options) Ledger, func(t *testing.T) []string) {
		path := filepath.Join(t.TempDir(), "ledger.db")
		open := func(t *testing.T, o Options) Ledger {
			l, err := OpenSQLite(path, o)
			require.NoError(t, err)
			return l
		}
		owners := func(t *testing.T) []string {
			db, err := sql.Open("sqlite3", "file:"+path+"?_query_only=1")
			require.NoError(t, err)
			defer db.Close()
			rows, err := db.Query(`SELECT name FROM owners ORDER BY id`)
			require.NoError(t, err)
			defer rows.Close()
			var out []string
			for rows.Next() {
				var n string
				require.NoError(t, rows.Scan(&n))
				out = append(out, n)
			}
			return out
		}
		return open, owners
	},
}

var pgOwners = ownerBackend{
	shared: true,
	newStore: func(t *testing.T) (func(t *testing.T, o Options) Ledger, func(t *testing.T) []string) {
		conn := testPGConnString(t)
		schema := freshPGSchema(t, conn)
		open := func(t *testing.T, o Options) Ledger {
			o.Schema = schema
			l, err := OpenPostgres(context.Background(), conn, o)
			require.NoError(t, err)
			return l
		}
		owners := func(t *testing.T) []string {
			ctx := context.Background()
			c, err := pgx.Connect(ctx, conn)
			require.NoError(t, err)
			defer c.Close(ctx)
			rows, err := c.Query(ctx, `SELECT name FROM `+pgx.Identifier{schema}.Sanitize()+`.owners ORDER BY id`)
			require.NoError(t, err)
			out, err := pgx.CollectRows(rows, pgx.RowTo[string])
			require.NoError(t, err)
			return out
		}
		return open, owners
	},
}

func TestSQLite_OwnerContract(t *testing.T) { runOwnerContract(t, sqliteOwners) }
func TestPostgres_OwnerContract(t *testing.T) {
	testPGConnString(t)
	runOwnerContract(t, pgOwners)
}

func orphanIDs(t *testing.T, l Ledger) []IntentID {
	t.Helper()
	p, err := l.PendingOrphans(context.Background())
	require.NoError(t, err)
	ids := []IntentID{}
	for _, in := range p {
		ids = append(ids, in.ID)
	}
	return ids
}

// short is a lease that expires within a test.
var short = Options{LeaseDuration: time.Second, RenewInterval: 100 * time.Millisecond}

func named(o Options, owner string) Options {
	o.Owner = owner
	return o
}

// runOwnerContract pins which pending intents are orphans, on one backend.
func runOwnerContract(t *testing.T, b ownerBackend) {
	ctx := context.Background()

	t.Run("OwnIntentsAreNeverOrphans", func(t *testing.T) {
		open, _ := b.newStore(t)
		l := open(t, Options{})
		defer l.Close()
		id := intend(t, l, entry("public.docs", "1", "alice"))
		require.Empty(t, orphanIDs(t, l))
		require.Equal(t, []IntentID{id}, pendingIDs(t, l), "Pending still lists every pending intent")
	})

	t.Run("ClosedHandleLeavesOrphansForTheNext", func(t *testing.T) {
		open, _ := b.newStore(t)
		a := open(t, Options{})
		committed := intend(t, a, entry("public.docs", "1", "alice"), entry("public.docs", "2", "alice"))
		rolledBack := intend(t, a, entry("public.docs", "3", "alice"))
		confirmed := intend(t, a, entry("public.docs", "4", "alice"))
		require.NoError(t, a.Confirm(ctx, confirmed))
		require.NoError(t, a.Close())

		next := open(t, Options{})
		defer next.Close()
		own := intend(t, next, entry("public.docs", "5", "alice"))
		orphans, err := next.PendingOrphans(ctx)
		require.NoError(t, err)
		require.Len(t, orphans, 2)
		require.Equal(t, committed, orphans[0].ID)
		require.Equal(t, []Entry{entry("public.docs", "1", "alice"), entry("public.docs", "2", "alice")}, orphans[0].Entries)
		require.Equal(t, rolledBack, orphans[1].ID)

		require.NoError(t, next.Confirm(ctx, committed))
		require.NoError(t, next.Drop(ctx, rolledBack))
		require.Empty(t, orphanIDs(t, next))
		require.Equal(t, []IntentID{own}, pendingIDs(t, next))
	})

	t.Run("CrashedHandleLeavesOrphans", func(t *testing.T) {
		open, _ := b.newStore(t)
		a := open(t, named(short, "proxy-a"))
		id := intend(t, a, entry("public.docs", "1", "alice"))
		crash(a)
		next := open(t, named(short, "proxy-b"))
		defer next.Close()
		if b.shared {
			require.Empty(t, orphanIDs(t, next), "until its lease expires, a silent handle may be alive")
			require.Eventually(t, func() bool { return len(orphanIDs(t, next)) == 1 }, 5*time.Second, 20*time.Millisecond)
		}
		require.Equal(t, []IntentID{id}, orphanIDs(t, next))
		require.NoError(t, next.Confirm(ctx, id))
		require.Equal(t, []key{{"public.docs", "1", StateConfirmed, id}}, bySubject(t, next, "alice"))
	})

	t.Run("OwnersAreRegisteredAndRemovedAtClose", func(t *testing.T) {
		open, owners := b.newStore(t)
		a := open(t, Options{Owner: "proxy-a"})
		require.Equal(t, []string{"proxy-a"}, owners(t))
		require.NoError(t, a.Close())
		require.Empty(t, owners(t))
		d := open(t, Options{})
		names := owners(t)
		require.Len(t, names, 1)
		require.Regexp(t, regexp.MustCompile(`^.+/[0-9a-f]{8}$`), names[0], "the default name is the host and random hex")
		require.NoError(t, d.Close())
		require.Empty(t, owners(t))
	})

	t.Run("PendingOrphansAfterCloseIsErrClosed", func(t *testing.T) {
		open, _ := b.newStore(t)
		l := open(t, Options{})
		require.NoError(t, l.Close())
		_, err := l.PendingOrphans(ctx)
		require.ErrorIs(t, err, ErrClosed)
		require.ErrorIs(t, err, ErrUnavailable)
	})

	if !b.shared {
		return
	}

	t.Run("LiveLeaseKeepsIntentsFromOrphanhood", func(t *testing.T) {
		open, _ := b.newStore(t)
		a := open(t, named(short, "proxy-a"))
		defer a.Close()
		bl := open(t, named(short, "proxy-b"))
		defer bl.Close()
		ia := intend(t, a, entry("public.docs", "1", "alice"))
		ib := intend(t, bl, entry("public.docs", "2", "alice"))
		for range 6 { // three leases long: renewals keep both alive
			require.Empty(t, orphanIDs(t, a))
			require.Empty(t, orphanIDs(t, bl))
			time.Sleep(short.LeaseDuration / 2)
		}
		_, err := a.Intend(ctx, []Entry{entry("public.docs", "3", "alice")})
		require.NoError(t, err, "a renewed lease does not fence")
		require.ElementsMatch(t, []IntentID{ia, ib}, pendingIDs(t, a)[:2])
	})

	t.Run("LapsedLeaseMakesOrphansAndFencesNewIntents", func(t *testing.T) {
		open, _ := b.newStore(t)
		a := open(t, named(short, "proxy-a")).(*Postgres)
		defer a.Close()
		bl := open(t, named(short, "proxy-b"))
		defer bl.Close()
		ia := intend(t, a, entry("public.docs", "1", "alice"))
		a.owner.stopRenewing() // a proxy that cannot reach the ledger, or is paused
		require.Eventually(t, func() bool { return len(orphanIDs(t, bl)) == 1 }, 5*time.Second, 20*time.Millisecond)
		require.Equal(t, []IntentID{ia}, orphanIDs(t, bl))
		_, err := a.Intend(ctx, []Entry{entry("public.docs", "2", "alice")})
		require.ErrorIs(t, err, ErrUnavailable, "a handle whose lease lapsed refuses new intents: others may be resolving them")
		require.ErrorContains(t, err, "lease")

		// B resolves; A learns of it when it comes back with its decision.
		require.NoError(t, bl.Drop(ctx, ia))
		require.ErrorIs(t, a.Confirm(ctx, ia), ErrUnknownIntent)
	})

	t.Run("RestartUnderTheSameNameRecoversAtOnce", func(t *testing.T) {
		open, _ := b.newStore(t)
		long := Options{LeaseDuration: time.Hour, RenewInterval: time.Minute}
		a := open(t, named(long, "proxy-a"))
		id := intend(t, a, entry("public.docs", "1", "alice"))
		crash(a)
		other := open(t, named(long, "proxy-b"))
		defer other.Close()
		require.Empty(t, orphanIDs(t, other), "proxy-a's lease is live for another hour")
		again := open(t, named(long, "proxy-a"))
		defer again.Close()
		require.Equal(t, []IntentID{id}, orphanIDs(t, again), "but proxy-a's next run knows its previous one is gone")
	})

	t.Run("RenewalAddsBackARemovedOwnerRow", func(t *testing.T) {
		open, _ := b.newStore(t)
		// No background renewal within the test: it renews by hand, so a
		// slow machine cannot renew between the delete and the check.
		manual := Options{LeaseDuration: 2 * time.Hour, RenewInterval: time.Hour}
		a := open(t, named(manual, "proxy-a")).(*Postgres)
		defer a.Close()
		bl := open(t, named(manual, "proxy-b"))
		defer bl.Close()
		intend(t, a, entry("public.docs", "1", "alice"))
		_, err := a.pool.Exec(ctx, a.q(`DELETE FROM ledger.owners WHERE id = $1`), a.owner.id)
		require.NoError(t, err)
		require.Len(t, orphanIDs(t, bl), 1, "a missing owner is a closed one")
		require.NoError(t, a.renew(ctx))
		require.Empty(t, orphanIDs(t, bl), "the next renewal registers A again, under the same id")
	})

	t.Run("TwoSurvivorsResolvingTheSameOrphansAgree", func(t *testing.T) {
		open, _ := b.newStore(t)
		dead := open(t, Options{})
		const n = 20
		ids := make([]IntentID, n)
		for i := range ids {
			ids[i] = intend(t, dead, entry("public.docs", string(rune('a'+i)), "alice"))
		}
		require.NoError(t, dead.Close())
		s1, s2 := open(t, Options{}), open(t, Options{})
		defer s1.Close()
		defer s2.Close()
		require.Len(t, orphanIDs(t, s1), n)
		require.Len(t, orphanIDs(t, s2), n)

		// Both confirm the even ones (they agree); on the odd ones s1
		// confirms and s2 drops (a record appeared between their looks).
		var wg sync.WaitGroup
		errs := make([][2]error, n)
		for i, id := range ids {
			wg.Add(2)
			go func() { defer wg.Done(); errs[i][0] = s1.Confirm(ctx, id) }()
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					errs[i][1] = s2.Confirm(ctx, id)
				} else {
					errs[i][1] = s2.Drop(ctx, id)
				}
			}()
		}
		wg.Wait()
		confirmed := map[string]bool{}
		for _, k := range bySubject(t, s1, "alice") {
			require.Equal(t, StateConfirmed, k.State)
			confirmed[k.RecordID] = true
		}
		for i := range ids {
			id := string(rune('a' + i))
			if i%2 == 0 {
				require.NoError(t, errs[i][0])
				require.NoError(t, errs[i][1])
				require.True(t, confirmed[id])
				continue
			}
			// One of them won; the loser is told which way it went.
			switch {
			case errs[i][0] == nil && errors.Is(errs[i][1], ErrIntentConfirmed):
				require.True(t, confirmed[id])
			case errs[i][1] == nil && errors.Is(errs[i][0], ErrUnknownIntent):
				require.False(t, confirmed[id])
			default:
				t.Fatalf("intent %d: confirm %v, drop %v", ids[i], errs[i][0], errs[i][1])
			}
		}
		require.Empty(t, orphanIDs(t, s1))
	})
}

func TestPostgres_RenewIntervalMustBeShorterThanTheLease(t *testing.T) {
	conn := testPGConnString(t)
	_, err := OpenPostgres(context.Background(), conn, Options{Schema: freshPGSchema(t, conn), LeaseDuration: time.Second, RenewInterval: time.Second})
	require.ErrorContains(t, err, "RenewInterval")
}
