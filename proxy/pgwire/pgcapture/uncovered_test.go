package pgcapture

import (
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/assert"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
)

var notesUncovered = extract.Writers{Uncovered: []extract.UncoveredRelation{{Schema: "public", Name: "notes", Table: "public.notes"}}}

// coverage.mode enforce: writes adding or changing rows of an uncovered
// table are refused LT005 in either capture mode, through simple and
// extended queries; reads, deletes and writes of configured tables pass,
// and the session goes on.
func TestSession_RefusesWritesToUncoveredTables(t *testing.T) {
	for _, mode := range []capture.Mode{capture.Strict, capture.Permissive} {
		t.Run(string(mode), func(t *testing.T) {
			s, _ := memSession(t, mode)
			defer s.capture.Close()
			s.capture.SetRules(s.capture.Rules().WithWriters(notesUncovered))
			c := &conversation{t: t, s: s}

			c.client(query("INSERT INTO notes (id, body) VALUES (1, 'x')")).server(ready('I'))
			assert.Equal(t, []string{capture.CodeUncovered}, c.refusals)
			c.client(&pgproto3.Parse{Name: "up", Query: "UPDATE public.notes SET body = $1"})
			assert.Equal(t, []string{capture.CodeUncovered, capture.CodeUncovered}, c.refusals, "refused at Parse")
			c.client(&pgproto3.Bind{PreparedStatement: "up", Parameters: [][]byte{[]byte("y")}}, &pgproto3.Execute{}, &pgproto3.Sync{}).server(ready('I'))
			assert.Equal(t, []string{capture.CodeUncovered, capture.CodeUncovered, capture.CodeUncovered}, c.refusals, "and at Execute")
			assert.NotZero(t, s.capture.Stats.RefusedUncovered.Load())

			c.refusals = nil
			c.client(query("SELECT * FROM notes")).server(done("SELECT 1"), ready('I'))
			c.client(query("DELETE FROM notes WHERE id = 1")).server(done("DELETE 1"), ready('I'))
			c.client(query("INSERT INTO docs (id, user_id) VALUES ('a', 'ann')")).server(done("INSERT 0 1"), ready('I'))
			assert.Empty(t, c.refusals)
		})
	}
}
