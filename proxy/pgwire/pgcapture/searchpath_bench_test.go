package pgcapture

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// memLedger takes intents without I/O, so that benchmarks measure
// capture, and records them for tests as "table/id" per entry.
type memLedger struct {
	ledger.Ledger
	mu        sync.Mutex
	next      ledger.IntentID
	entries   map[ledger.IntentID][]string
	confirmed []string
}

func (l *memLedger) Intend(_ context.Context, es []ledger.Entry) (ledger.IntentID, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	if l.entries == nil {
		l.entries = map[ledger.IntentID][]string{}
	}
	for _, e := range es {
		l.entries[l.next] = append(l.entries[l.next], e.Table+"/"+e.RecordID)
	}
	return l.next, nil
}

func (l *memLedger) StartIntend(ctx context.Context, es []ledger.Entry) ledger.Intending {
	return ledger.Intended(l.Intend(ctx, es))
}

func (l *memLedger) Confirm(_ context.Context, id ledger.IntentID) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.confirmed = append(l.confirmed, l.entries[id]...)
	return nil
}

func (l *memLedger) ConfirmAll(ctx context.Context, ids []ledger.IntentID) []error {
	errs := make([]error, len(ids))
	for i, id := range ids {
		errs[i] = l.Confirm(ctx, id)
	}
	return errs
}

func (l *memLedger) Drop(context.Context, ledger.IntentID) error { return nil }

// wire is one protocol message as the relay hands it to the observer.
func wire(tb testing.TB, m interface {
	Encode([]byte) ([]byte, error)
}) pgwire.Message {
	b, err := m.Encode(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return pgwire.Message{Type: b[0], Body: b[5:]}
}

// benchSession opens a capture session over public.docs(id, user_id).
func benchSession(tb testing.TB) *session {
	s, _ := memSession(tb, capture.Strict)
	tb.Cleanup(s.capture.Close)
	return s
}

// memSession opens a session of a Capture over public.docs(id, user_id)
// and a memLedger; the caller closes s.capture.
func memSession(tb testing.TB, mode capture.Mode) (*session, *memLedger) {
	l := &memLedger{}
	return memSessionOn(tb, mode, l), l
}

// memSessionOn is memSession over the ledger l.
func memSessionOn(tb testing.TB, mode capture.Mode, l ledger.Ledger) *session {
	rules, err := extract.NewRules([]extract.Rule{{Table: "public.docs", ID: "id", Subjects: []extract.Subject{{Column: "user_id"}}}})
	if err != nil {
		tb.Fatal(err)
	}
	h, err := ledger.NewHasher(make([]byte, 32))
	if err != nil {
		tb.Fatal(err)
	}
	c := capture.New(capture.Config{Rules: rules, Ledger: l, Hasher: h, Mode: mode})
	return newSession(New(c, Config{}), pgwire.SessionInfo{Parameters: map[string]string{}})
}

// exchange plays client messages, then server messages, through s.
func exchange(tb testing.TB, s *session, client, server []pgwire.Message) {
	for _, m := range client {
		if r := s.ClientMessage(m); r != nil {
			tb.Fatalf("refused: %s", r.Message)
		}
	}
	for _, m := range server {
		s.ServerMessage(m)
	}
}

// BenchmarkSession measures what capture adds per statement on the relay's
// hot path: a pgbench-style SELECT through a named prepared statement (what
// pgx sends once its statement cache is warm) and as an unnamed Parse, a
// simple Query, and a write to a configured table through a named
// statement (tags at Bind, an intent at Execute).
func BenchmarkSession(b *testing.B) {
	sync := wire(b, &pgproto3.Sync{})
	ready := wire(b, &pgproto3.ReadyForQuery{TxStatus: 'I'})
	selected := wire(b, &pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")})
	inserted := wire(b, &pgproto3.CommandComplete{CommandTag: []byte("INSERT 0 1")})
	const selectSQL = "SELECT abalance FROM pgbench_accounts WHERE aid = $1"
	const insertSQL = "INSERT INTO docs (id, user_id) VALUES ($1, $2)"
	cases := []struct {
		name           string
		setup          []pgwire.Message
		client, server []pgwire.Message
	}{
		{"select/named",
			[]pgwire.Message{wire(b, &pgproto3.Parse{Name: "s1", Query: selectSQL})},
			[]pgwire.Message{wire(b, &pgproto3.Bind{PreparedStatement: "s1", Parameters: [][]byte{[]byte("42")}}), wire(b, &pgproto3.Execute{}), sync},
			[]pgwire.Message{selected, ready}},
		{"select/unnamed", nil,
			[]pgwire.Message{wire(b, &pgproto3.Parse{Query: selectSQL}), wire(b, &pgproto3.Bind{Parameters: [][]byte{[]byte("42")}}), wire(b, &pgproto3.Execute{}), sync},
			[]pgwire.Message{selected, ready}},
		{"select/simple", nil,
			[]pgwire.Message{wire(b, &pgproto3.Query{String: "SELECT abalance FROM pgbench_accounts WHERE aid = 42"})},
			[]pgwire.Message{selected, ready}},
		// A read of a configured table, as pgbench -S sends it when its
		// tables are configured: not parsed (readonly.go).
		{"select/simple/configured", nil,
			[]pgwire.Message{wire(b, &pgproto3.Query{String: "SELECT user_id FROM docs WHERE id = 42"})},
			[]pgwire.Message{selected, ready}},
		{"select/unnamed/configured", nil,
			[]pgwire.Message{wire(b, &pgproto3.Parse{Query: "SELECT user_id FROM docs WHERE id = $1"}), wire(b, &pgproto3.Bind{Parameters: [][]byte{[]byte("42")}}), wire(b, &pgproto3.Execute{}), sync},
			[]pgwire.Message{selected, ready}},
		{"insert/simple/inline-1536", nil,
			[]pgwire.Message{wire(b, &pgproto3.Query{String: inlineInsert(1536)})},
			[]pgwire.Message{inserted, ready}},
		{"insert/named",
			[]pgwire.Message{wire(b, &pgproto3.Parse{Name: "i1", Query: insertSQL})},
			[]pgwire.Message{wire(b, &pgproto3.Bind{PreparedStatement: "i1", Parameters: [][]byte{[]byte("doc-1"), []byte("ann")}}), wire(b, &pgproto3.Execute{}), sync},
			[]pgwire.Message{inserted, ready}},
		// In a block after a SET that a ROLLBACK would undo, so that
		// every Sync has two possible outcomes to follow.
		{"insert/named/in-block-after-set",
			[]pgwire.Message{wire(b, &pgproto3.Parse{Name: "i1", Query: insertSQL}), sync, wire(b, &pgproto3.Query{String: "BEGIN"}),
				wire(b, &pgproto3.Query{String: "SET search_path TO public"})},
			[]pgwire.Message{wire(b, &pgproto3.Bind{PreparedStatement: "i1", Parameters: [][]byte{[]byte("doc-1"), []byte("ann")}}), wire(b, &pgproto3.Execute{}), sync},
			[]pgwire.Message{inserted, wire(b, &pgproto3.ReadyForQuery{TxStatus: 'T'})}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			s := benchSession(b)
			exchange(b, s, tc.setup, nil)
			for _, m := range tc.setup {
				if m.Type == 'S' {
					exchange(b, s, nil, []pgwire.Message{ready})
				}
				if m.Type == 'Q' { // answer the setup's Queries
					exchange(b, s, nil, []pgwire.Message{wire(b, &pgproto3.CommandComplete{CommandTag: []byte("SET")}),
						wire(b, &pgproto3.ReadyForQuery{TxStatus: 'T'})})
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				exchange(b, s, tc.client, tc.server)
			}
		})
	}
}

// inlineInsert is a one-row INSERT with its vector of dim dimensions inline
// as a literal, as psycopg2 sends a chat memory's add.
func inlineInsert(dim int) string {
	var sb strings.Builder
	sb.WriteString("INSERT INTO docs (id, embedding, user_id) VALUES ('doc-1', '[")
	for d := 0; d < dim; d++ {
		if d > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "0.%06d", d*7919%999983)
	}
	sb.WriteString("]', 'ann')")
	return sb.String()
}
