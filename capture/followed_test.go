package capture

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// intentCounter is a ledger that takes every intent at once and counts
// them.
type intentCounter struct {
	ledger.Ledger
	intents atomic.Int64
}

func (l *intentCounter) StartIntend(_ context.Context, _ []ledger.Entry) ledger.Intending {
	return ledger.Intended(ledger.IntentID(l.intents.Add(1)), nil)
}

func newFollowedCapture(t *testing.T) (*Capture, *intentCounter, *Followed, *Recent) {
	t.Helper()
	hasher, err := ledger.NewHasher([]byte("0123456789abcdef0123456789abcdef"))
	require.NoError(t, err)
	l, followed, recent := &intentCounter{}, NewFollowed(), NewRecent(0)
	c := New(Config{Ledger: l, Hasher: hasher, Followed: followed, Recent: recent, Tombstones: NewTombstones()})
	t.Cleanup(c.Close)
	return c, l, followed, recent
}

func write(table, id string, subjects ...string) []extract.Tag {
	return []extract.Tag{{Op: extract.OpWrite, Table: table, ID: id, Subjects: subjects}}
}

func TestFollowed_WritesToFollowedTablesTakeNoIntentAndAreRemembered(t *testing.T) {
	c, l, followed, recent := newFollowedCapture(t)
	require.True(t, followed.Set(followed.Generation(), []string{"public.notes"}))

	id, r := c.Intend(ledger.StorePostgres, write("public.notes", "n1", "alice"))
	require.Nil(t, r)
	require.Zero(t, id, "a followed table's write has no intent to confirm")
	require.Zero(t, l.intents.Load(), "no intent reached the ledger")
	require.Nil(t, c.StartDurable([]ledger.Entry{{Store: ledger.StorePostgres, Table: "public.notes", RecordID: "n2", Subject: c.cfg.Hasher.Hash("bob")}}, "public.notes"))
	require.EqualValues(t, 2, c.Stats.Followed.Load())
	require.Equal(t, Agree, recent.Check("public.notes", "n1", []ledger.SubjectHash{c.cfg.Hasher.Hash("alice")}),
		"the follower still compares the row with what the proxy read")

	_, r = c.Intend(ledger.StorePostgres, write("public.other", "o1", "alice"))
	require.Nil(t, r)
	require.EqualValues(t, 1, l.intents.Load(), "a table not followed takes an intent")
	_, r = c.Intend(ledger.StorePinecone, write("public.notes", "p1", "alice"))
	require.Nil(t, r)
	require.EqualValues(t, 2, l.intents.Load(), "only PostgreSQL tables are followed")
	_, r = c.Intend(ledger.StorePostgres, []extract.Tag{{Op: extract.OpUnattributed, Table: "public.notes"}})
	require.Nil(t, r)
	require.EqualValues(t, 3, l.intents.Load(), "an unattributed write keeps its intent")
}

func TestFollowed_AForgottenSubjectIsRefusedOnAFollowedTable(t *testing.T) {
	c, l, followed, _ := newFollowedCapture(t)
	followed.Set(followed.Generation(), []string{"public.notes"})
	c.cfg.Tombstones.Set(c.cfg.Hasher.Hash("carol"), true)

	_, r := c.Intend(ledger.StorePostgres, write("public.notes", "n1", "carol"))
	require.NotNil(t, r)
	require.Equal(t, CodeForgotten, r.Code)
	require.Zero(t, l.intents.Load())
}

func TestFollowed_SuspendOutlivesARefreshThatBeganBeforeIt(t *testing.T) {
	c, l, followed, _ := newFollowedCapture(t)
	gen := followed.Generation()
	c.DDLSeen() // DDL went through while the follower was refreshing
	require.False(t, followed.Set(gen, []string{"public.notes"}), "a refresh begun before the DDL may predate it")
	_, _ = c.Intend(ledger.StorePostgres, write("public.notes", "n1", "alice"))
	require.EqualValues(t, 1, l.intents.Load(), "after DDL, writes take intents again")

	require.True(t, followed.Set(followed.Generation(), []string{"public.notes"}))
	_, _ = c.Intend(ledger.StorePostgres, write("public.notes", "n2", "alice"))
	require.EqualValues(t, 1, l.intents.Load(), "a refresh after the DDL follows the table again")

	followed.Suspend() // the follower stopped streaming
	_, _ = c.Intend(ledger.StorePostgres, write("public.notes", "n3", "alice"))
	require.EqualValues(t, 2, l.intents.Load())
}

func TestFollowed_NilFollowsNothing(t *testing.T) {
	var f *Followed
	require.False(t, f.Has("public.notes"))
	f.Suspend()
}
