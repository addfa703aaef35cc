package pgcapture

import (
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

func TestReadsOnly_RecognisesOnlySelectsThatCannotWrite(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT user_id FROM docs WHERE id = 42":             true,
		"  select id from docs;":                             true,
		"SELECT*FROM docs":                                   true,
		"SELECT id FROM docs FOR UPDATE":                     true,
		"SELECT add_doc('d1', 'ann')":                        false, // a function may write
		"SELECT * INTO docs_copy FROM docs":                  false, // creates a table
		"select id into temp t from docs":                    false,
		"SELECT id FROM docs WHERE id IN (SELECT 1)":         false,
		"WITH d AS (DELETE FROM docs RETURNING id) SELECT 1": false,
		"SELECT 1; INSERT INTO docs VALUES ('d1', 'ann')":    false,
		"SELECT 'a;b' FROM docs":                             false, // may be two statements: judged as before
		"selected_docs":                                      false,
		"INSERT INTO docs VALUES ('d1', 'ann')":              false,
		"/* c */ SELECT id FROM docs":                        false,
		"SELEC":                                              false,
		"":                                                   false,
	} {
		if got := readsOnly(sql); got != want {
			t.Errorf("readsOnly(%q) = %v, want %v", sql, got, want)
		}
	}
}

// A simple-protocol SELECT of a configured table costs what one of another
// table costs: no parse, so no more allocations.
func TestSession_SelectOfAConfiguredTableIsNotParsed(t *testing.T) {
	ready := wire(t, &pgproto3.ReadyForQuery{TxStatus: 'I'})
	selected := wire(t, &pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")})
	allocs := func(sql string) float64 {
		s, _ := memSession(t, capture.Strict)
		defer s.capture.Close()
		q := wire(t, &pgproto3.Query{String: sql})
		return testing.AllocsPerRun(100, func() {
			exchange(t, s, []pgwire.Message{q}, []pgwire.Message{selected, ready})
		})
	}
	other := allocs("SELECT abalance FROM pgbench_accounts WHERE aid = 42")
	configured := allocs("SELECT user_id FROM docs WHERE id = 42")
	if configured > other {
		t.Errorf("a SELECT of a configured table makes %.0f allocations, one of another table %.0f: it was parsed", configured, other)
	}
}
