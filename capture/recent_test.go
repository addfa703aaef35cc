package capture

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/ledger"
)

func TestRecent_ComparesEachRecordOnceWithWhatWasStored(t *testing.T) {
	h := func(s string) ledger.SubjectHash { return testHasher(t).Hash(s) }
	e := func(id, subject string) ledger.Entry {
		return ledger.Entry{Store: ledger.StorePostgres, Table: "public.docs", RecordID: id, Subject: h(subject)}
	}
	r := NewRecent(10)
	r.add([]ledger.Entry{e("d1", "alice"), e("d1", "bob"), e("d2", "carol"), e("", "dave"), e("", "dave"), e("", "erin"),
		{Store: ledger.StorePinecone, Table: "idx/ns", RecordID: "v1", Subject: h("alice")}})

	require.Equal(t, Agree, r.Check("public.docs", "d1", []ledger.SubjectHash{h("bob"), h("alice")}), "order does not matter")
	require.Equal(t, NotSeen, r.Check("public.docs", "d1", []ledger.SubjectHash{h("alice")}), "checked once")
	require.Equal(t, Disagree, r.Check("public.docs", "d2", []ledger.SubjectHash{h("carol@example")}))
	require.Equal(t, NotSeen, r.Check("public.notes", "d2", []ledger.SubjectHash{h("carol")}), "another table")
	require.Equal(t, NotSeen, r.Check("idx/ns", "v1", []ledger.SubjectHash{h("alice")}), "PostgreSQL records only")

	// Generated ids: matched by subject, one row per entry.
	require.Equal(t, Agree, r.Check("public.docs", "101", []ledger.SubjectHash{h("dave")}))
	require.Equal(t, Agree, r.Check("public.docs", "102", []ledger.SubjectHash{h("dave")}))
	require.Equal(t, NotSeen, r.Check("public.docs", "103", []ledger.SubjectHash{h("dave")}))
	require.Equal(t, NotSeen, r.Check("public.docs", "104", []ledger.SubjectHash{h("erin"), h("frank")}), "not every subject was tagged")
	require.Equal(t, Agree, r.Check("public.docs", "105", []ledger.SubjectHash{h("erin")}), "and nothing was taken")
}

func TestRecent_KeepsTwoGenerationsOfItsLimit(t *testing.T) {
	h := testHasher(t).Hash("alice")
	r := NewRecent(2)
	for _, id := range []string{"1", "2", "3", "4", "5"} {
		r.add([]ledger.Entry{{Store: ledger.StorePostgres, Table: "t", RecordID: id, Subject: h}})
	}
	require.LessOrEqual(t, len(r.cur)+len(r.prev), 4)
	require.Equal(t, NotSeen, r.Check("t", "1", []ledger.SubjectHash{h}), "the oldest generation was dropped")
	require.Equal(t, Agree, r.Check("t", "5", []ledger.SubjectHash{h}))
}

func testHasher(t *testing.T) *ledger.Hasher {
	h, err := ledger.NewHasher([]byte("recent-test-salt-0123456789abcdef"))
	require.NoError(t, err)
	return h
}

// An insert and an update of one record before the WAL has either: each
// row agrees with its own write.
func TestRecent_SeveralWritesOfOneRecordAreCheckedInOrder(t *testing.T) {
	h := testHasher(t)
	e := func(subject string) []ledger.Entry {
		return []ledger.Entry{{Store: ledger.StorePostgres, Table: "t", RecordID: "r1", Subject: h.Hash(subject)}}
	}
	r := NewRecent(10)
	r.add(e("alice"))
	r.add(e("bob"))
	r.add(e("carol"))
	require.Equal(t, Agree, r.Check("t", "r1", []ledger.SubjectHash{h.Hash("alice")}))
	require.Equal(t, Agree, r.Check("t", "r1", []ledger.SubjectHash{h.Hash("carol")}), "bob's write rolled back")
	require.Equal(t, NotSeen, r.Check("t", "r1", []ledger.SubjectHash{h.Hash("bob")}))
	r.add(e("dave"))
	require.Equal(t, Disagree, r.Check("t", "r1", []ledger.SubjectHash{h.Hash("erin")}))
	require.Equal(t, NotSeen, r.Check("t", "r1", []ledger.SubjectHash{h.Hash("dave")}))
}
