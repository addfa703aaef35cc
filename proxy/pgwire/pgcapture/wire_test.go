package pgcapture

import (
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// A select's exchange allocates nothing through a named prepared statement
// (pgbench -S -M prepared), and only its text as a simple Query.
func TestSession_SelectExchangeAllocatesAtMostItsQueryText(t *testing.T) {
	sync := wire(t, &pgproto3.Sync{})
	ready := wire(t, &pgproto3.ReadyForQuery{TxStatus: 'I'})
	selected := wire(t, &pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")})
	for _, tc := range []struct {
		name          string
		setup, client []pgwire.Message
		want          float64
	}{
		{"named", []pgwire.Message{wire(t, &pgproto3.Parse{Name: "s1", Query: "SELECT abalance FROM pgbench_accounts WHERE aid = $1"})},
			[]pgwire.Message{wire(t, &pgproto3.Bind{PreparedStatement: "s1", Parameters: [][]byte{[]byte("42")}}), wire(t, &pgproto3.Execute{}), sync}, 0},
		{"simple", nil,
			[]pgwire.Message{wire(t, &pgproto3.Query{String: "SELECT abalance FROM pgbench_accounts WHERE aid = 42"})}, 1},
		{"simple/configured", nil,
			[]pgwire.Message{wire(t, &pgproto3.Query{String: "SELECT user_id FROM docs WHERE id = 42"})}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := memSession(t, capture.Strict)
			defer s.capture.Close()
			exchange(t, s, tc.setup, nil)
			got := testing.AllocsPerRun(100, func() {
				exchange(t, s, tc.client, []pgwire.Message{selected, ready})
			})
			if got > tc.want {
				t.Errorf("a select's exchange makes %.0f allocations, want at most %.0f", got, tc.want)
			}
		})
	}
}

// The decoders accept exactly what pgproto3's Decode accepts, and read
// the same fields.
func TestWire_DecodersAcceptWhatPgprotoAccepts(t *testing.T) {
	bodies := [][]byte{nil, {}, {0}, []byte("x"), []byte("x\x00"), []byte("x\x00y"), []byte("x\x00\x00"),
		[]byte("p\x00\x00\x00\x00"), []byte("p\x00\x00\x00\x00\x01"), []byte("p\x00\x00\x00\x01"), []byte("\x00\x00\x00\x00\x00")}
	for _, b := range bodies {
		var q pgproto3.Query
		qerr := q.Decode(b)
		if got, ok := queryText(b); ok != (qerr == nil) || ok && got != q.String {
			t.Errorf("queryText(%q) = %q, %v; pgproto3: %q, %v", b, got, ok, q.String, qerr)
		}
		var e pgproto3.Execute
		eerr := e.Decode(b)
		if got, ok := executePortal(b); ok != (eerr == nil) || ok && string(got) != e.Portal {
			t.Errorf("executePortal(%q) = %q, %v; pgproto3: %q, %v", b, got, ok, e.Portal, eerr)
		}
		var c pgproto3.CommandComplete
		cerr := c.Decode(b)
		if got, ok := commandTag(b); ok != (cerr == nil) || ok && string(got) != string(c.CommandTag) {
			t.Errorf("commandTag(%q) = %q, %v; pgproto3: %q, %v", b, got, ok, c.CommandTag, cerr)
		}
	}
}
