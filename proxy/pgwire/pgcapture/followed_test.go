package pgcapture

import (
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// A write to a table the WAL follower streams in full is forwarded with no
// intent, in both protocols, and nothing is held back for one; DDL through
// the session makes writes take intents again until the follower's next
// refresh.
func TestSession_FollowedTablesTakeNoIntentUntilDDL(t *testing.T) {
	rules, err := extract.NewRules([]extract.Rule{{Table: "public.docs", ID: "id", Subjects: []extract.Subject{{Column: "user_id"}}}})
	require.NoError(t, err)
	h, err := ledger.NewHasher(make([]byte, 32))
	require.NoError(t, err)
	l, followed := &memLedger{}, capture.NewFollowed()
	c := capture.New(capture.Config{Rules: rules, Ledger: l, Hasher: h, Mode: capture.Strict, Followed: followed})
	t.Cleanup(c.Close)
	s := newSession(New(c, Config{}), pgwire.SessionInfo{Parameters: map[string]string{}})
	require.True(t, followed.Set(followed.Generation(), []string{"public.docs"}))
	intents := func() int {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.entries)
	}
	idle := func(tag string) {
		s.ServerMessage(wire(t, &pgproto3.CommandComplete{CommandTag: []byte(tag)}))
		s.ServerMessage(wire(t, &pgproto3.ReadyForQuery{TxStatus: 'I'}))
	}

	require.Nil(t, s.ClientMessage(wire(t, &pgproto3.Query{String: `INSERT INTO docs (id, user_id) VALUES ('a', 'ann')`})))
	idle("INSERT 0 1")
	require.Nil(t, s.ClientMessage(wire(t, &pgproto3.Parse{Query: `INSERT INTO docs (id, user_id) VALUES ($1, $2)`})))
	require.Nil(t, s.ClientMessage(wire(t, &pgproto3.Bind{Parameters: [][]byte{[]byte("b"), []byte("bob")}})))
	require.Nil(t, s.ClientMessage(wire(t, &pgproto3.Execute{})))
	require.False(t, s.WillWait('S'), "no intent in flight: the Sync is not held")
	require.Nil(t, s.ClientMessage(wire(t, &pgproto3.Sync{})))
	s.ServerMessage(wire(t, &pgproto3.ParseComplete{}))
	s.ServerMessage(wire(t, &pgproto3.BindComplete{}))
	idle("INSERT 0 1")
	require.Zero(t, intents(), "followed writes take no intent")
	require.EqualValues(t, 2, c.Stats.Followed.Load())

	require.Nil(t, s.ClientMessage(wire(t, &pgproto3.Query{String: `ALTER TABLE docs RENAME TO docs_old`})))
	require.False(t, followed.Has("public.docs"), "DDL sent: the publication may no longer hold the table")
	idle("ALTER TABLE")
	require.Nil(t, s.ClientMessage(wire(t, &pgproto3.Query{String: `INSERT INTO docs (id, user_id) VALUES ('c', 'cy')`})))
	idle("INSERT 0 1")
	require.Equal(t, 1, intents(), "after DDL the write takes an intent")
}
