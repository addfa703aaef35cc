package ledger

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSQLite_SettleContract(t *testing.T) { runSettleContract(t, sqliteBackend) }
func TestPostgres_SettleContract(t *testing.T) {
	testPGConnString(t)
	runSettleContract(t, pgBackend)
}

// pineconeEntry is an entry of a Pinecone namespace.
func pineconeEntry(table, id, subject string) Entry {
	return Entry{Store: StorePinecone, Table: table, RecordID: id, Subject: testHasher.Hash(subject)}
}

// runSettleContract pins Settler on one backend.
func runSettleContract(t *testing.T, b backend) {
	ctx := context.Background()
	fresh := func(t *testing.T) Ledger {
		open, _ := b.newStore(t)
		l := open(t)
		t.Cleanup(func() { l.Close() })
		return l
	}
	confirm := func(t *testing.T, l Ledger, entries ...Entry) {
		t.Helper()
		require.NoError(t, l.Confirm(ctx, intend(t, l, entries...)))
	}

	t.Run("PresentRecordsPagesTheConfirmedIdsOfOneTable", func(t *testing.T) {
		l := fresh(t)
		confirm(t, l, pineconeEntry("ix/ns", "c", "alice"), pineconeEntry("ix/ns", "a", "alice"), pineconeEntry("ix/ns", "a", "bob"),
			pineconeEntry("ix/ns", "b", "bob"), pineconeEntry("ix/ns", "d", "bob"), pineconeEntry("ix/other", "e", "bob"),
			Entry{Store: StorePostgres, Table: "ix/ns", RecordID: "f", Subject: testHasher.Hash("bob")})
		require.NoError(t, l.MarkDeleted(ctx, StorePinecone, "ix/ns", []string{"d"}))
		intend(t, l, pineconeEntry("ix/ns", "g", "carol")) // pending: not present yet
		require.NoError(t, l.(Observer).Observe(ctx, []Change{{Kind: ChangeWrite, Store: StorePinecone, Table: "ix/ns", RecordID: "bb",
			Subjects: []SubjectHash{testHasher.Hash("dave")}}}))
		s := l.(Settler)

		first, err := s.PresentRecords(ctx, StorePinecone, "ix/ns", "", 2)
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b"}, first, "one id per record however many subjects, in order")
		rest, err := s.PresentRecords(ctx, StorePinecone, "ix/ns", "b", 10)
		require.NoError(t, err)
		require.Equal(t, []string{"bb", "c"}, rest, "after the page's last id; observed records too; deleted, pending, other tables and stores not")
		none, err := s.PresentRecords(ctx, StorePinecone, "ix/ns", "c", 10)
		require.NoError(t, err)
		require.Empty(t, none)
		_, err = s.PresentRecords(ctx, StorePinecone, "ix/ns", "", 0)
		require.ErrorContains(t, err, "page size")
	})

	t.Run("MarksOnlyRecordsWhoseLastConfirmationPrecedesSince", func(t *testing.T) {
		l := fresh(t)
		s := l.(Settler)
		confirm(t, l, pineconeEntry("ix/ns", "old", "alice"), pineconeEntry("ix/ns", "again", "alice"),
			pineconeEntry("ix/ns", "moved", "alice"), pineconeEntry("ix/ns", "kept", "bob"))
		since := time.Now()
		for time.Now().UnixMicro() == since.UnixMicro() { // the next confirmation is in a later microsecond
		}
		confirm(t, l, pineconeEntry("ix/ns", "again", "alice"), pineconeEntry("ix/ns", "moved", "carol"))

		marked, err := s.MarkDeletedUnlessConfirmedSince(ctx, StorePinecone, "ix/ns", []string{"old", "again", "moved", "absent", ""}, since)
		require.NoError(t, err)
		require.Equal(t, 1, marked, "old only: again and moved were confirmed since; absent is unknown")
		require.ElementsMatch(t, []key{{"ix/ns", "old", StateDeleted, 1}, {"ix/ns", "again", StateConfirmed, 2}, {"ix/ns", "moved", StateConfirmed, 1}},
			bySubject(t, l, "alice"), "a record one of whose subjects was confirmed since keeps every subject")
		require.Equal(t, []key{{"ix/ns", "kept", StateConfirmed, 1}}, bySubject(t, l, "bob"), "a record not listed is untouched")

		marked, err = s.MarkDeletedUnlessConfirmedSince(ctx, StorePinecone, "ix/ns", []string{"old"}, since)
		require.NoError(t, err)
		require.Zero(t, marked, "a record deleted already is not marked again")
		marked, err = s.MarkDeletedUnlessConfirmedSince(ctx, StorePinecone, "ix/other", []string{"kept"}, time.Now())
		require.NoError(t, err)
		require.Zero(t, marked, "another table's record of that id")

		confirm(t, l, pineconeEntry("ix/ns", "old", "alice"))
		require.Contains(t, bySubject(t, l, "alice"), key{"ix/ns", "old", StateConfirmed, 3}, "a later confirmation makes it present again")
		_, err = s.MarkDeletedUnlessConfirmedSince(ctx, StorePinecone, "ix/ns", []string{"old"}, time.Time{})
		require.ErrorContains(t, err, "no time")
	})
}
