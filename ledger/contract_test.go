package ledger

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// backend is one ledger implementation under the contract. Each call of
// newStore makes a fresh, empty store (cleaned up with t) and returns a
// function that opens it; calling open again after Close reopens the same
// store, which is how durability across restarts is tested.
type backend struct {
	newStore func(t *testing.T) (open func(t *testing.T) Ledger, dump func(t *testing.T) []byte)
}

var testHasher = func() *Hasher {
	h, err := NewHasher([]byte("contract-test-salt-0123456789abcdef"))
	if err != nil {
		panic(err)
	}
	return h
}()

func entry(table, id, subject string) Entry {
	return Entry{Store: StorePostgres, Table: table, RecordID: id, Subject: testHasher.Hash(subject)}
}

// key is a record as the tests compare it: what, about whom, which state.
type key struct {
	Table, RecordID string
	State           State
	Intent          IntentID
}

func keys(recs []Record) []key {
	out := make([]key, 0, len(recs))
	for _, r := range recs {
		out = append(out, key{r.Table, r.RecordID, r.State, r.Intent})
	}
	return out
}

func bySubject(t *testing.T, l Ledger, subject string) []key {
	t.Helper()
	recs, err := l.BySubject(context.Background(), testHasher.Hash(subject))
	require.NoError(t, err)
	for _, r := range recs {
		require.Equal(t, testHasher.Hash(subject), r.Subject)
		require.False(t, r.UpdatedAt.IsZero())
	}
	return keys(recs)
}

func pendingIDs(t *testing.T, l Ledger) []IntentID {
	t.Helper()
	p, err := l.Pending(context.Background())
	require.NoError(t, err)
	ids := []IntentID{}
	for _, in := range p {
		ids = append(ids, in.ID)
	}
	return ids
}

func intend(t *testing.T, l Ledger, entries ...Entry) IntentID {
	t.Helper()
	id, err := l.Intend(context.Background(), entries)
	require.NoError(t, err)
	require.NotZero(t, id)
	return id
}

// runContract is the behaviour every Ledger backend must show.
func runContract(t *testing.T, b backend) {
	ctx := context.Background()

	// fresh opens a new empty store and closes it when the test ends.
	fresh := func(t *testing.T) Ledger {
		open, _ := b.newStore(t)
		l := open(t)
		t.Cleanup(func() { l.Close() })
		return l
	}

	t.Run("IntendShowsPending_ConfirmMakesItFindable", func(t *testing.T) {
		l := fresh(t)
		before := time.Now().Add(-time.Second)
		id := intend(t, l, entry("public.docs", "1", "alice@example.com"), entry("public.docs", "2", "alice@example.com"))

		p, err := l.Pending(ctx)
		require.NoError(t, err)
		require.Len(t, p, 1)
		require.Equal(t, id, p[0].ID)
		require.True(t, p[0].CreatedAt.After(before))
		require.Equal(t, []Entry{entry("public.docs", "1", "alice@example.com"), entry("public.docs", "2", "alice@example.com")}, p[0].Entries)
		require.Equal(t, []key{{"public.docs", "1", StatePending, id}, {"public.docs", "2", StatePending, id}}, bySubject(t, l, "alice@example.com"))

		require.NoError(t, l.Confirm(ctx, id))
		require.Empty(t, pendingIDs(t, l))
		require.Equal(t, []key{{"public.docs", "1", StateConfirmed, id}, {"public.docs", "2", StateConfirmed, id}}, bySubject(t, l, "alice@example.com"))
		require.Empty(t, bySubject(t, l, "bob@example.com"))

		require.NoError(t, l.Confirm(ctx, id), "confirming twice is idempotent")
	})

	t.Run("DropRemovesPendingEntries", func(t *testing.T) {
		l := fresh(t)
		id := intend(t, l, entry("public.docs", "1", "alice"))
		require.NoError(t, l.Drop(ctx, id))
		require.Empty(t, pendingIDs(t, l))
		require.Empty(t, bySubject(t, l, "alice"))
		require.NoError(t, l.Drop(ctx, id), "dropping twice is idempotent")
		require.ErrorIs(t, l.Confirm(ctx, id), ErrUnknownIntent, "a dropped intent cannot be confirmed")
	})

	t.Run("UnknownIntentsAndDropAfterConfirm", func(t *testing.T) {
		l := fresh(t)
		require.ErrorIs(t, l.Confirm(ctx, 424242), ErrUnknownIntent)
		require.ErrorIs(t, l.Drop(ctx, 424242), ErrUnknownIntent)
		id := intend(t, l, entry("public.docs", "1", "alice"))
		require.NoError(t, l.Confirm(ctx, id))
		require.ErrorIs(t, l.Drop(ctx, id), ErrIntentConfirmed)
		require.Equal(t, []key{{"public.docs", "1", StateConfirmed, id}}, bySubject(t, l, "alice"))
	})

	t.Run("StartIntendQueuesAndWaitGivesWhatIntendWould", func(t *testing.T) {
		l := fresh(t)
		first := l.StartIntend(ctx, []Entry{entry("public.docs", "1", "alice")})
		second := l.StartIntend(ctx, []Entry{entry("public.docs", "2", "alice")})
		a, err := first.Wait()
		require.NoError(t, err)
		b, err := second.Wait()
		require.NoError(t, err)
		require.NotEqual(t, a, b)
		require.ElementsMatch(t, []IntentID{a, b}, pendingIDs(t, l))
		_, err = l.StartIntend(ctx, []Entry{{Store: StorePostgres, Table: "public.docs", RecordID: "3"}}).Wait()
		require.ErrorContains(t, err, "no subject")
	})

	t.Run("ConfirmAllConfirmsEachAndReportsEachOutcome", func(t *testing.T) {
		l := fresh(t)
		a := intend(t, l, entry("public.docs", "a", "alice"))
		b := intend(t, l, entry("public.docs", "b", "alice"))
		dropped := intend(t, l, entry("public.docs", "c", "alice"))
		require.NoError(t, l.Drop(ctx, dropped))
		errs := l.ConfirmAll(ctx, []IntentID{a, 424242, dropped, b})
		require.Len(t, errs, 4)
		require.NoError(t, errs[0])
		require.ErrorIs(t, errs[1], ErrUnknownIntent)
		require.ErrorIs(t, errs[2], ErrUnknownIntent)
		require.NoError(t, errs[3])
		require.Equal(t, []key{{"public.docs", "a", StateConfirmed, a}, {"public.docs", "b", StateConfirmed, b}}, bySubject(t, l, "alice"))

		cctx, cancel := context.WithCancel(ctx)
		cancel()
		for _, err := range l.ConfirmAll(cctx, []IntentID{a, b}) {
			require.ErrorIs(t, err, context.Canceled)
		}
	})

	t.Run("DropOfRewriteKeepsEarlierConfirmation", func(t *testing.T) {
		// Intent A's write committed; intent B rewrites the same record
		// (an upsert) and rolls back. The record must still be known.
		l := fresh(t)
		a := intend(t, l, entry("public.docs", "1", "alice"))
		require.NoError(t, l.Confirm(ctx, a))
		b := intend(t, l, entry("public.docs", "1", "alice"))
		require.Equal(t, []key{{"public.docs", "1", StateConfirmed, a}, {"public.docs", "1", StatePending, b}}, bySubject(t, l, "alice"))
		require.NoError(t, l.Drop(ctx, b))
		require.Equal(t, []key{{"public.docs", "1", StateConfirmed, a}}, bySubject(t, l, "alice"))

		// And when the rewrite commits, the latest confirmation wins.
		c := intend(t, l, entry("public.docs", "1", "alice"), entry("public.docs", "1", "alice"))
		require.NoError(t, l.Confirm(ctx, c))
		require.Equal(t, []key{{"public.docs", "1", StateConfirmed, c}}, bySubject(t, l, "alice"))
	})

	t.Run("LargeConfirmationWithRewritesAmongNewRecords", func(t *testing.T) {
		// 300 entries (several statements on SQLite), two of them records
		// the ledger has already, marked deleted: all 300 end confirmed by
		// the later intent, none twice.
		l := fresh(t)
		a := intend(t, l, entry("public.docs", "r150", "alice"), entry("public.docs", "r299", "alice"))
		require.NoError(t, l.Confirm(ctx, a))
		require.NoError(t, l.MarkDeleted(ctx, StorePostgres, "public.docs", []string{"r150", "r299"}))
		entries := make([]Entry, 300)
		want := make([]key, 300)
		for i := range entries {
			entries[i] = entry("public.docs", "r"+strconv.Itoa(i), "alice")
		}
		b := intend(t, l, entries...)
		for i, e := range entries {
			want[i] = key{"public.docs", e.RecordID, StateConfirmed, b}
		}
		require.NoError(t, l.Confirm(ctx, b))
		got := bySubject(t, l, "alice")
		require.ElementsMatch(t, want, got)
	})

	t.Run("SeveralSubjectsPerRecord", func(t *testing.T) {
		l := fresh(t)
		id := intend(t, l, entry("public.chats", "c1", "alice"), entry("public.chats", "c1", "bob"))
		require.NoError(t, l.Confirm(ctx, id))
		require.Equal(t, []key{{"public.chats", "c1", StateConfirmed, id}}, bySubject(t, l, "alice"))
		require.Equal(t, []key{{"public.chats", "c1", StateConfirmed, id}}, bySubject(t, l, "bob"))

		require.NoError(t, l.MarkDeleted(ctx, StorePostgres, "public.chats", []string{"c1"}))
		require.Equal(t, StateDeleted, bySubject(t, l, "alice")[0].State)
		require.Equal(t, StateDeleted, bySubject(t, l, "bob")[0].State)
	})

	t.Run("GeneratedRecordIDsAreKeptPerTableAndSubject", func(t *testing.T) {
		l := fresh(t)
		a := intend(t, l, entry("public.data_docs", "", "alice"), entry("public.data_docs", "", "alice"))
		b := intend(t, l, entry("public.data_docs", "", "alice"), entry("public.other", "", "alice"), entry("public.data_docs", "", "bob"))
		require.NoError(t, l.Confirm(ctx, a))
		require.NoError(t, l.Confirm(ctx, b))
		require.Equal(t, []key{{"public.data_docs", "", StateConfirmed, b}, {"public.other", "", StateConfirmed, b}}, bySubject(t, l, "alice"))
		require.Equal(t, []key{{"public.data_docs", "", StateConfirmed, b}}, bySubject(t, l, "bob"))
		require.NoError(t, l.MarkDeleted(ctx, StorePostgres, "public.data_docs", []string{""}), "empty ids are ignored")
		require.Equal(t, StateConfirmed, bySubject(t, l, "bob")[0].State)
	})

	t.Run("UnattributedEntries", func(t *testing.T) {
		l := fresh(t)
		un := Entry{Store: StorePinecone, Table: "idx/ns", Unattributed: true}
		id := intend(t, l, un)
		require.NoError(t, l.Confirm(ctx, id))
		counts, err := l.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, []TableCount{{StorePinecone, "idx/ns", StateConfirmed, 1}}, counts)

		_, err = l.Intend(ctx, []Entry{{Store: StorePinecone, Table: "idx/ns"}})
		require.ErrorContains(t, err, "no subject", "an attributed entry needs a subject")
		require.False(t, errors.Is(err, ErrUnavailable))
		_, err = l.Intend(ctx, []Entry{{Store: StorePinecone, Table: "idx/ns", RecordID: "1", Unattributed: true}})
		require.Error(t, err)
	})

	t.Run("InvalidTextIsRefusedBeforeTheStore", func(t *testing.T) {
		l := fresh(t)
		for _, e := range []Entry{entry("public.docs", "\xff\xfe", "alice"), entry("public.do\x00cs", "1", "alice"), entry("", "1", "alice")} {
			_, err := l.Intend(ctx, []Entry{entry("public.docs", "ok", "alice"), e})
			require.Error(t, err)
			require.False(t, errors.Is(err, ErrUnavailable), "a bad entry is the caller's error, not the ledger's: %v", err)
		}
		require.Empty(t, pendingIDs(t, l), "nothing of a refused Intend is stored")
		// The error is logged (capture: write refused): it names the field,
		// never quotes the record id, which is row data.
		_, err := l.Intend(ctx, []Entry{entry("public.docs", "notes-of-alice\x00", "alice")})
		require.ErrorContains(t, err, "the record id is not valid UTF-8")
		require.NotContains(t, err.Error(), "notes-of-alice")
	})

	t.Run("ConfirmKeepsIDsAndTablesExactly", func(t *testing.T) {
		// SQLite confirms through a JSON array: its metacharacters and
		// control bytes must come back as they went in.
		l := fresh(t)
		odd := []string{`a"b`, `back\slash`, "line\nfeed\ttab\x01\x1f", "[1,2]", "ünï©ødé 🙂", `\u0041`, " "}
		var es []Entry
		var want []key
		for _, id := range odd {
			es = append(es, entry(`public."We""ird"`, id, "alice"))
		}
		es = append(es, entry(`public."We""ird"`, odd[0], "alice")) // the same record twice: one row
		id := intend(t, l, es...)
		require.NoError(t, l.Confirm(ctx, id))
		for _, rid := range odd {
			want = append(want, key{`public."We""ird"`, rid, StateConfirmed, id})
		}
		got := bySubject(t, l, "alice")
		sort.Slice(got, func(i, j int) bool { return got[i].RecordID < got[j].RecordID })
		sort.Slice(want, func(i, j int) bool { return want[i].RecordID < want[j].RecordID })
		require.Equal(t, want, got)
	})

	t.Run("MarkDeleted", func(t *testing.T) {
		l := fresh(t)
		id := intend(t, l, entry("public.docs", "1", "alice"), entry("public.docs", "2", "alice"), entry("public.notes", "1", "alice"))
		require.NoError(t, l.Confirm(ctx, id))
		require.NoError(t, l.MarkDeleted(ctx, StorePostgres, "public.docs", []string{"1", "missing"}))
		require.NoError(t, l.MarkDeleted(ctx, StorePinecone, "public.docs", []string{"2"}), "another store's table of the same name")
		require.Equal(t, []key{
			{"public.docs", "1", StateDeleted, id},
			{"public.docs", "2", StateConfirmed, id},
			{"public.notes", "1", StateConfirmed, id},
		}, bySubject(t, l, "alice"))

		// Re-inserted after deletion: confirmed again.
		again := intend(t, l, entry("public.docs", "1", "alice"))
		require.NoError(t, l.Confirm(ctx, again))
		require.Equal(t, key{"public.docs", "1", StateConfirmed, again}, bySubject(t, l, "alice")[0])
	})

	t.Run("MarkTableDeletedMarksEveryConfirmedRecordOfThatTableOnly", func(t *testing.T) {
		l := fresh(t)
		id := intend(t, l, entry("docs/ns1", "1", "alice"), entry("docs/ns1", "2", "bob"),
			entry("docs/ns1", "", "alice"), entry("docs/ns2", "1", "alice"))
		require.NoError(t, l.Confirm(ctx, id))
		pending := intend(t, l, entry("docs/ns1", "3", "alice"))
		require.NoError(t, l.MarkTableDeleted(ctx, StorePinecone, "docs/ns1"), "another store's table of the same name")
		require.Equal(t, []key{{"docs/ns1", "", StateConfirmed, id}, {"docs/ns1", "1", StateConfirmed, id},
			{"docs/ns1", "3", StatePending, pending}, {"docs/ns2", "1", StateConfirmed, id}}, bySubject(t, l, "alice"))

		require.NoError(t, l.MarkTableDeleted(ctx, StorePostgres, "docs/ns1"))
		require.Equal(t, []key{{"docs/ns1", "", StateDeleted, id}, {"docs/ns1", "1", StateDeleted, id},
			{"docs/ns1", "3", StatePending, pending}, {"docs/ns2", "1", StateConfirmed, id}}, bySubject(t, l, "alice"))
		require.Equal(t, []key{{"docs/ns1", "2", StateDeleted, id}}, bySubject(t, l, "bob"))
		require.Equal(t, []IntentID{pending}, pendingIDs(t, l), "a pending intent stays pending: its write may land after the delete")
		require.NoError(t, l.MarkTableDeleted(ctx, StorePostgres, "docs/ns1"), "marking twice is not an error")
		require.Error(t, l.MarkTableDeleted(ctx, StorePostgres, ""), "no table named")

		// Written again after the delete: confirmed again.
		again := intend(t, l, entry("docs/ns1", "1", "alice"))
		require.NoError(t, l.Confirm(ctx, again))
		require.Contains(t, bySubject(t, l, "alice"), key{"docs/ns1", "1", StateConfirmed, again})
	})

	t.Run("ObserveAddsStoredSubjectsAndDeletes", func(t *testing.T) {
		l := fresh(t)
		o, ok := l.(Observer)
		require.True(t, ok, "every backend takes the WAL follower's changes")
		proxy := intend(t, l, entry("public.docs", "1", "mallory"))
		require.NoError(t, l.Confirm(ctx, proxy))
		hashes := func(s ...string) []SubjectHash {
			out := []SubjectHash{}
			for _, x := range s {
				out = append(out, testHasher.Hash(x))
			}
			return out
		}
		write := func(table, id string, subjects ...string) Change {
			return Change{Kind: ChangeWrite, Store: StorePostgres, Table: table, RecordID: id, Subjects: hashes(subjects...)}
		}
		changes := []Change{
			write("public.docs", "1", "alice"), // the proxy tagged a decoy: alice is added, mallory stays a candidate
			write("public.docs", "2", "alice", "bob"),
			write("public.notes", "7", "alice"),
			{Kind: ChangeDelete, Store: StorePostgres, Table: "public.docs", RecordID: "2"},
			write("public.docs", "3", "alice"),
		}
		require.NoError(t, o.Observe(ctx, changes))
		require.NoError(t, o.Observe(ctx, changes), "a replay after a crash gives the same ledger")
		require.Equal(t, []key{
			{"public.docs", "1", StateConfirmed, 0},
			{"public.docs", "2", StateDeleted, 0},
			{"public.docs", "3", StateConfirmed, 0},
			{"public.notes", "7", StateConfirmed, 0},
		}, bySubject(t, l, "alice"), "the WAL's facts carry intent 0")
		require.Equal(t, []key{{"public.docs", "1", StateConfirmed, proxy}}, bySubject(t, l, "mallory"))
		require.Equal(t, []key{{"public.docs", "2", StateDeleted, 0}}, bySubject(t, l, "bob"))

		require.NoError(t, o.Observe(ctx, []Change{{Kind: ChangeTruncate, Store: StorePostgres, Table: "public.docs"}}))
		require.Equal(t, []key{
			{"public.docs", "1", StateDeleted, 0},
			{"public.docs", "2", StateDeleted, 0},
			{"public.docs", "3", StateDeleted, 0},
			{"public.notes", "7", StateConfirmed, 0},
		}, bySubject(t, l, "alice"))
		require.Equal(t, []key{{"public.docs", "1", StateDeleted, proxy}}, bySubject(t, l, "mallory"), "a truncate deletes the proxy's tags too")
		require.NoError(t, o.Observe(ctx, []Change{write("public.docs", "3", "alice")}))
		require.Equal(t, key{"public.docs", "3", StateConfirmed, 0}, bySubject(t, l, "alice")[2], "written again after the truncate")

		require.NoError(t, o.Observe(ctx, []Change{write("public.docs", "5", "alice"),
			{Kind: ChangeDelete, Store: StorePostgres, Table: "public.docs", RecordID: "5"}, write("public.docs", "5", "alice")}))
		require.Contains(t, bySubject(t, l, "alice"), key{"public.docs", "5", StateConfirmed, 0}, "changes apply in order: deleted, then written again")

		require.Error(t, o.Observe(ctx, []Change{{Kind: ChangeWrite, Store: StorePostgres, Table: "public.docs"}}), "a write names its record")
	})

	// One Observe call holding every shape a follower's batch can have:
	// the writes between two deletes or truncates may be written together,
	// and must leave the ledger as if each change were applied alone.
	t.Run("ObserveAppliesOneBatchInOrderAndKeepsTheConfirmingIntent", func(t *testing.T) {
		l := fresh(t)
		o := l.(Observer)
		proxy := intend(t, l, entry("public.docs", "1", "alice"), entry("public.docs", "2", "alice"), entry("public.docs", "r100", "zed"))
		require.NoError(t, l.Confirm(ctx, proxy))
		require.NoError(t, l.MarkDeleted(ctx, StorePostgres, "public.docs", []string{"2"}))
		write := func(table, id string, subjects ...string) Change {
			c := Change{Kind: ChangeWrite, Store: StorePostgres, Table: table, RecordID: id}
			for _, s := range subjects {
				c.Subjects = append(c.Subjects, testHasher.Hash(s))
			}
			return c
		}
		delIn := func(table, id string) Change {
			return Change{Kind: ChangeDelete, Store: StorePostgres, Table: table, RecordID: id}
		}
		del := func(id string) Change { return delIn("public.docs", id) }
		changes := []Change{
			write("public.docs", "1", "alice", "bob"), // confirmed by the proxy: stays its; bob is new
			write("public.docs", "2", "alice"),        // deleted: confirmed again, still the proxy's
			write("public.docs", "3", "alice"),
			write("public.docs", "3", "alice"), // twice in one run of writes
			write("public.docs", "4", "alice"),
			del("4"),
			write("public.docs", "4", "alice"), // written, deleted, written again
			write("public.docs", "5", "alice"),
			del("5"), // written, then deleted
			write("public.docs", "6", "alice", "alice"),
			write("public.notes", "1", "alice"),
			{Kind: ChangeTruncate, Store: StorePostgres, Table: "public.notes"},
			write("public.notes", "2", "alice"),
		}
		// A run longer than any one INSERT, with a record the proxy
		// confirmed and a record written twice far apart.
		for i := range 300 {
			changes = append(changes, write("public.docs", fmt.Sprintf("r%03d", i), "zed"))
		}
		changes = append(changes, write("public.docs", "r150", "zed"))
		// A run of deletes over two tables, then one of them written again.
		changes = append(changes, write("public.docs", "7", "alice"), write("public.docs", "8", "alice"), write("public.notes", "3", "alice"),
			del("7"), del("8"), delIn("public.notes", "3"), write("public.docs", "8", "alice"))
		want := func(t *testing.T) {
			require.Equal(t, []key{
				{"public.docs", "1", StateConfirmed, proxy},
				{"public.docs", "2", StateConfirmed, proxy},
				{"public.docs", "3", StateConfirmed, 0},
				{"public.docs", "4", StateConfirmed, 0},
				{"public.docs", "5", StateDeleted, 0},
				{"public.docs", "6", StateConfirmed, 0},
				{"public.docs", "7", StateDeleted, 0},
				{"public.docs", "8", StateConfirmed, 0},
				{"public.notes", "1", StateDeleted, 0},
				{"public.notes", "2", StateConfirmed, 0},
				{"public.notes", "3", StateDeleted, 0},
			}, bySubject(t, l, "alice"))
			require.Equal(t, []key{{"public.docs", "1", StateConfirmed, 0}}, bySubject(t, l, "bob"))
			zed := bySubject(t, l, "zed")
			require.Len(t, zed, 300, "r000…r299, r100 the proxy's")
			for _, k := range zed {
				if k.RecordID == "r100" {
					require.Equal(t, key{"public.docs", "r100", StateConfirmed, proxy}, k)
					continue
				}
				require.Equal(t, key{"public.docs", k.RecordID, StateConfirmed, 0}, k)
			}
		}
		require.NoError(t, o.Observe(ctx, changes))
		want(t)
		require.NoError(t, o.ObserveNoSync(ctx, changes))
		want(t)
	})

	t.Run("ObserveNoSyncIsVisibleAtOnceAndALaterObserveMakesItDurable", func(t *testing.T) {
		open, _ := b.newStore(t)
		l := open(t)
		o := l.(Observer)
		write := func(id, subject string) Change {
			return Change{Kind: ChangeWrite, Store: StorePostgres, Table: "public.docs", RecordID: id, Subjects: []SubjectHash{testHasher.Hash(subject)}}
		}
		require.NoError(t, o.ObserveNoSync(ctx, []Change{write("1", "alice"), write("2", "alice")}))
		require.Equal(t, []key{{"public.docs", "1", StateConfirmed, 0}, {"public.docs", "2", StateConfirmed, 0}},
			bySubject(t, l, "alice"), "visible to readers before any durable commit")
		require.NoError(t, o.ObserveNoSync(ctx, []Change{{Kind: ChangeDelete, Store: StorePostgres, Table: "public.docs", RecordID: "2"}, write("3", "alice")}))
		require.NoError(t, o.ObserveNoSync(ctx, nil))
		require.Error(t, o.ObserveNoSync(ctx, []Change{{Kind: ChangeWrite, Store: StorePostgres, Table: "public.docs"}}), "checked as Observe checks")
		require.NoError(t, o.Observe(ctx, []Change{write("4", "alice")}))
		want := []key{
			{"public.docs", "1", StateConfirmed, 0},
			{"public.docs", "2", StateDeleted, 0},
			{"public.docs", "3", StateConfirmed, 0},
			{"public.docs", "4", StateConfirmed, 0},
		}
		require.Equal(t, want, bySubject(t, l, "alice"), "applied in order, across transactions")
		require.NoError(t, l.Close())

		l = open(t)
		defer l.Close()
		require.Equal(t, want, bySubject(t, l, "alice"), "the earlier transactions are kept with the durable one")
	})

	t.Run("HoldsOnlyTheExactConfirmedRecordAndSubject", func(t *testing.T) {
		l := fresh(t)
		h, ok := l.(Holder)
		require.True(t, ok, "every backend answers reconcile")
		confirmed := intend(t, l, entry("public.docs", "1", "alice"), entry("public.docs", "2", "bob"),
			entry("public.docs", "", "carol"), Entry{Store: StorePostgres, Table: "public.docs", Unattributed: true})
		require.NoError(t, l.Confirm(ctx, confirmed))
		require.NoError(t, l.MarkDeleted(ctx, StorePostgres, "public.docs", []string{"2"}))
		intend(t, l, entry("public.docs", "3", "alice")) // pending
		o := l.(Observer)
		require.NoError(t, o.Observe(ctx, []Change{{Kind: ChangeWrite, Store: StorePinecone, Table: "idx/ns", RecordID: "v1",
			Subjects: []SubjectHash{testHasher.Hash("dave")}}}))
		asked := []Entry{
			entry("public.docs", "1", "alice"),   // held
			entry("public.docs", "1", "mallory"), // the record, under another subject
			entry("public.docs", "2", "bob"),     // deleted
			entry("public.docs", "3", "alice"),   // pending
			entry("public.docs", "9", "carol"),   // carol is held only under a generated id
			entry("public.notes", "1", "alice"),  // another table
			{Store: StorePinecone, Table: "idx/ns", RecordID: "v1", Subject: testHasher.Hash("dave")}, // the WAL's fact
			{Store: StorePostgres, Table: "idx/ns", RecordID: "v1", Subject: testHasher.Hash("dave")}, // another store
			entry("public.docs", "1", "alice"), // asked twice
		}
		held, err := h.Holds(ctx, asked)
		require.NoError(t, err)
		require.Equal(t, []bool{true, false, false, false, false, false, true, false, true}, held)

		held, err = h.Holds(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, held)
		_, err = h.Holds(ctx, []Entry{{Store: StorePostgres, Table: "public.docs", Unattributed: true}})
		require.Error(t, err, "an unattributed entry names no record")
	})

	t.Run("Counts", func(t *testing.T) {
		l := fresh(t)
		c := intend(t, l, entry("public.docs", "1", "alice"), entry("public.docs", "2", "bob"), entry("public.docs", "2", "carol"))
		require.NoError(t, l.Confirm(ctx, c))
		require.NoError(t, l.MarkDeleted(ctx, StorePostgres, "public.docs", []string{"1"}))
		intend(t, l, entry("public.docs", "3", "alice"), Entry{Store: StorePinecone, Table: "idx/", RecordID: "v1", Subject: testHasher.Hash("alice")})
		counts, err := l.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, []TableCount{
			{StorePinecone, "idx/", StatePending, 1},
			{StorePostgres, "public.docs", StateConfirmed, 2},
			{StorePostgres, "public.docs", StateDeleted, 1},
			{StorePostgres, "public.docs", StatePending, 1},
		}, counts)
	})

	t.Run("ConcurrentIntendsAreDurableWithDistinctIDs", func(t *testing.T) {
		open, _ := b.newStore(t)
		l := open(t)
		const n = 50
		ids := make([]IntentID, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ids[i], errs[i] = l.Intend(ctx, []Entry{entry("public.docs", fmt.Sprint(i), fmt.Sprint("subject-", i))})
			}()
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		require.NoError(t, l.Close())

		l = open(t)
		defer l.Close()
		got := pendingIDs(t, l)
		want := append([]IntentID(nil), ids...)
		sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
		require.Equal(t, want, got, "every intent survives a restart, each with its own id")
		for i := range n {
			require.Equal(t, []key{{"public.docs", fmt.Sprint(i), StatePending, ids[i]}}, bySubject(t, l, fmt.Sprint("subject-", i)))
		}
	})

	t.Run("ReopenKeepsEverything", func(t *testing.T) {
		open, _ := b.newStore(t)
		l := open(t)
		a := intend(t, l, entry("public.docs", "1", "alice"))
		require.NoError(t, l.Confirm(ctx, a))
		d := intend(t, l, entry("public.docs", "2", "alice"))
		require.NoError(t, l.Confirm(ctx, d))
		require.NoError(t, l.MarkDeleted(ctx, StorePostgres, "public.docs", []string{"2"}))
		dropped := intend(t, l, entry("public.docs", "3", "alice"))
		require.NoError(t, l.Drop(ctx, dropped))
		p := intend(t, l, entry("public.docs", "4", "alice"))
		before := bySubject(t, l, "alice")
		require.NoError(t, l.Close())

		l = open(t)
		require.Equal(t, before, bySubject(t, l, "alice"))
		require.Equal(t, []IntentID{p}, pendingIDs(t, l))
		next := intend(t, l, entry("public.docs", "5", "alice"))
		require.Greater(t, next, p, "intent ids are not reused after a restart")
		require.ErrorIs(t, l.Confirm(ctx, dropped), ErrUnknownIntent)
		require.NoError(t, l.Close())

		l = open(t) // and opening an up-to-date schema again is a no-op
		require.NoError(t, l.Close())
	})

	t.Run("ClosedLedgerIsUnavailable", func(t *testing.T) {
		open, _ := b.newStore(t)
		l := open(t)
		require.NoError(t, l.Close())
		_, err := l.Intend(ctx, []Entry{entry("public.docs", "1", "alice")})
		require.ErrorIs(t, err, ErrUnavailable)
		require.ErrorIs(t, l.Confirm(ctx, 1), ErrUnavailable)
		require.ErrorIs(t, l.ConfirmAll(ctx, []IntentID{1})[0], ErrUnavailable)
		_, err = l.BySubject(ctx, testHasher.Hash("alice"))
		require.ErrorIs(t, err, ErrUnavailable)
		_, err = l.Pending(ctx)
		require.ErrorIs(t, err, ErrUnavailable)
	})

	t.Run("CloseFlushesQueuedWrites", func(t *testing.T) {
		open, _ := b.newStore(t)
		l := open(t)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var done []IntentID
		var failed []error
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id, err := l.Intend(ctx, []Entry{entry("public.docs", fmt.Sprint(i), "alice")})
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					done = append(done, id)
				} else {
					failed = append(failed, err)
				}
			}()
		}
		time.Sleep(time.Millisecond)
		require.NoError(t, l.Close())
		wg.Wait()
		for _, err := range failed {
			require.ErrorIs(t, err, ErrUnavailable, "an Intend after Close is refused as unavailable")
		}
		l = open(t)
		defer l.Close()
		got := pendingIDs(t, l)
		for _, id := range done {
			require.Contains(t, got, id, "an Intend that returned is durable")
		}
	})

	t.Run("CancelledContext", func(t *testing.T) {
		l := fresh(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := l.Intend(cctx, []Entry{entry("public.docs", "1", "alice")})
		require.ErrorIs(t, err, context.Canceled)
	})

	t.Run("SubjectsAreNeverStoredInClear", func(t *testing.T) {
		open, dump := b.newStore(t)
		l := open(t)
		const subject = "very-identifiable.person@example.com"
		id := intend(t, l, entry("public.docs", "1", subject), entry("public.docs", "", subject))
		require.NoError(t, l.Confirm(ctx, id))
		intend(t, l, entry("public.docs", "2", subject))
		require.NoError(t, l.Close())

		raw := dump(t)
		require.NotContains(t, string(raw), subject)
		require.NotContains(t, string(raw), "very-identifiable")
		h := testHasher.Hash(subject)
		// The dump does hold the hash, so it is not simply empty.
		require.True(t, bytes.Contains(raw, h[:]) || bytes.Contains(raw, []byte(hex.EncodeToString(h[:]))),
			"the dump should contain the subject's hash")
	})
}

func TestHasher(t *testing.T) {
	salt := bytes.Repeat([]byte{7}, 32)
	h1, err := NewHasher(salt)
	require.NoError(t, err)
	h2, err := NewHasher(append([]byte(nil), salt...))
	require.NoError(t, err)
	other, err := NewHasher(bytes.Repeat([]byte{8}, 32))
	require.NoError(t, err)

	require.Equal(t, h1.Hash("alice@example.com"), h2.Hash("alice@example.com"), "same salt, same hash")
	require.NotEqual(t, h1.Hash("alice@example.com"), other.Hash("alice@example.com"), "different salt, different hash")
	require.NotEqual(t, h1.Hash("alice@example.com"), h1.Hash("bob@example.com"))
	require.Len(t, h1.Hash("x").String(), 64)

	_, err = NewHasher(make([]byte, 31))
	require.ErrorIs(t, err, ErrShortSalt)
	_, err = NewHasher(nil)
	require.ErrorIs(t, err, ErrShortSalt)

	// The Hasher keeps its own copy of the salt.
	salt[0] = 9
	require.Equal(t, h1.Hash("alice@example.com"), h2.Hash("alice@example.com"))

	// It is HMAC-SHA256(salt, subject), whatever it hashed before and
	// however many goroutines use it at once.
	want := func(subject string) SubjectHash {
		m := hmac.New(sha256.New, bytes.Repeat([]byte{7}, 32))
		m.Write([]byte(subject))
		return SubjectHash(m.Sum(nil))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				s := strconv.Itoa(g) + "/" + strconv.Itoa(i) + strings.Repeat("x", i%70)
				if h1.Hash(s) != want(s) {
					t.Errorf("Hash(%q) is not HMAC-SHA256(salt, subject)", s)
					return
				}
			}
		}()
	}
	wg.Wait()
}
