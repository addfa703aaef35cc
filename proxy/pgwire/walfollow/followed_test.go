package walfollow

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// followedSet is a Followed that remembers what it was told.
type followedSet struct {
	mu     sync.Mutex
	gen    uint64
	tables []string
}

func (s *followedSet) Generation() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

func (s *followedSet) Set(gen uint64, tables []string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen != s.gen {
		return false
	}
	s.tables = slices.Clone(tables)
	return true
}

func (s *followedSet) Suspend() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	s.tables = nil
}

func (s *followedSet) is(want ...string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Equal(s.tables, want)
}

// The follower names the tables it streams in full, and only once every
// later change to them is in the slot: a table with no replica identity,
// or with an inheritance child that has none, is not named; a table
// created later is named after the refresh that publishes it; a second
// follower waiting for the slot names them too; a follower that stops
// names none.
func TestFollower_NamesTheTablesStreamedInFull(t *testing.T) {
	rules := append(docsRules(),
		extract.Rule{Table: "notes", ID: "id", Subjects: subjects("user_id")},
		extract.Rule{Table: "later", ID: "id", Subjects: subjects("user_id")})
	f := newFixture(t, docsDDL+`CREATE TABLE notes (id text PRIMARY KEY, user_id text);`, rules...)
	q := func(table string) string { return f.schema + "." + table }
	start := func(set *followedSet) (*Follower, func()) {
		fl, err := New(Config{ConnString: f.connStr, Name: f.name, Rules: f.rules, Ledger: f.ledger, Core: &testCore{observer: f.ledger},
			Followed: set, FlushInterval: 20 * time.Millisecond, RefreshInterval: 100 * time.Millisecond})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); fl.Run(ctx) }()
		return fl, func() { cancel(); <-done }
	}
	first := &followedSet{}
	_, stop := start(first)
	require.Eventually(t, func() bool { return first.is(q("events"), q("notes")) }, 30*time.Second, 10*time.Millisecond,
		"docs has a child with no replica identity, loose has none, later does not exist")

	f.exec(`CREATE TABLE ` + q("later") + ` (id text PRIMARY KEY, user_id text)`)
	require.Eventually(t, func() bool { return first.is(q("events"), q("later"), q("notes")) }, 30*time.Second, 10*time.Millisecond)
	f.exec(`INSERT INTO ` + q("later") + ` VALUES ('l1', 'erin')`)
	f.await("erin", record{"later", "l1", ledger.StateConfirmed}) // named once its writes are in the stream

	second := &followedSet{}
	waiting, stopSecond := start(second)
	defer stopSecond()
	require.Eventually(t, func() bool { return waiting.Stats.SlotBusy.Load() > 0 }, 30*time.Second, 10*time.Millisecond)
	require.True(t, second.is(q("events"), q("later"), q("notes")), "the slot is streamed, by the other follower")

	stop()
	require.True(t, first.is(), "a follower that stopped streaming names nothing")
}
