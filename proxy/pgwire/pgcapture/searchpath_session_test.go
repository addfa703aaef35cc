package pgcapture

import (
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
)

// conversation plays a session's messages in wire order: client messages
// (refusals are collected) and server answers.
type conversation struct {
	t        *testing.T
	s        *session
	refusals []string
}

func (c *conversation) client(ms ...pgproto3.FrontendMessage) *conversation {
	for _, m := range ms {
		if r := c.s.ClientMessage(wire(c.t, m)); r != nil {
			c.refusals = append(c.refusals, r.Code)
		}
	}
	return c
}

func (c *conversation) server(ms ...pgproto3.BackendMessage) *conversation {
	for _, m := range ms {
		c.s.ServerMessage(wire(c.t, m))
	}
	return c
}

func query(sql string) *pgproto3.Query { return &pgproto3.Query{String: sql} }
func done(tag string) *pgproto3.CommandComplete {
	return &pgproto3.CommandComplete{CommandTag: []byte(tag)}
}
func ready(status byte) *pgproto3.ReadyForQuery { return &pgproto3.ReadyForQuery{TxStatus: status} }

var failed = &pgproto3.ErrorResponse{Severity: "ERROR", Code: "22012", Message: "division by zero"}

// confirmedAfter closes the session's Capture and returns the "table/id"
// of every confirmed intent.
func confirmedAfter(s *session, l *memLedger) []string {
	s.capture.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	slices.Sort(l.confirmed) // decisions are applied concurrently
	return l.confirmed
}

// PostgreSQL re-analyses a prepared statement bound under another
// search_path (plancache.c), so the table a named statement writes is the
// one its Bind's path resolves: pgx prepares once and binds for ever.
func TestSession_NamedStatementWritesTheTableOfThePathAtBind(t *testing.T) {
	s, l := memSession(t, capture.Strict)
	c := &conversation{t: t, s: s}
	insert := func(id string) []pgproto3.FrontendMessage {
		return []pgproto3.FrontendMessage{
			&pgproto3.Bind{PreparedStatement: "ins", Parameters: [][]byte{[]byte(id), []byte("ann")}},
			&pgproto3.Execute{}, &pgproto3.Sync{},
		}
	}
	c.client(query("SET search_path TO other")).server(done("SET"), ready('I'))
	c.client(&pgproto3.Parse{Name: "ins", Query: "INSERT INTO docs (id, user_id) VALUES ($1, $2)"})
	c.client(insert("o1")...).server(done("INSERT 0 1"), ready('I')) // other.docs: not configured
	c.client(query("SET search_path TO public")).server(done("SET"), ready('I'))
	c.client(insert("p1")...).server(done("INSERT 0 1"), ready('I'))
	c.client(query("SET search_path TO other")).server(done("SET"), ready('I'))
	c.client(insert("o2")...).server(done("INSERT 0 1"), ready('I'))
	assert.Empty(t, c.refusals)
	assert.Equal(t, []string{"public.docs/p1"}, confirmedAfter(s, l))
}

// A Query refused in strict mode never reaches the server: its SET does
// not happen, and its error and ReadyForQuery must not be taken for the
// answers to the Query pipelined after it.
func TestSession_RefusedQueryChangesNoPathAndKeepsTheTrackerInStep(t *testing.T) {
	s, l := memSession(t, capture.Strict)
	c := &conversation{t: t, s: s}
	c.client(query("SET search_path TO other; INSERT INTO public.docs (id, user_id) SELECT id, user_id FROM staging"))
	require.Equal(t, []string{capture.CodeUnattributed}, c.refusals)
	c.client(query("INSERT INTO docs (id, user_id) VALUES ('p1', 'ann')")) // public.docs: nothing ran
	c.server(failed, ready('I'))                                           // the refusal's raise
	c.server(done("INSERT 0 1"), ready('I'))
	assert.Equal(t, []string{"public.docs/p1"}, confirmedAfter(s, l))
}

// The statements of one Query run in order: a SET in it applies to the
// statements after it, and to later Queries if the Query commits.
func TestSession_SetInAQueryAppliesToTheStatementsAfterIt(t *testing.T) {
	s, l := memSession(t, capture.Strict)
	c := &conversation{t: t, s: s}
	c.client(query("SET search_path TO other; INSERT INTO docs (id, user_id) VALUES ('o1', 'ann')"))
	c.server(done("SET"), done("INSERT 0 1"), ready('I'))
	c.client(query("INSERT INTO docs (id, user_id) VALUES ('o2', 'ann'); RESET search_path; INSERT INTO docs (id, user_id) VALUES ('p1', 'ann')"))
	c.server(done("INSERT 0 1"), done("RESET"), done("INSERT 0 1"), ready('I'))
	assert.Empty(t, c.refusals)
	assert.Equal(t, []string{"public.docs/p1"}, confirmedAfter(s, l))
}

// The brief's lost tag: a rolled-back SET must not hide the next write.
func TestSession_RolledBackSetDoesNotHideTheNextWrite(t *testing.T) {
	s, l := memSession(t, capture.Strict)
	c := &conversation{t: t, s: s}
	for _, step := range []struct {
		sql     string
		answers []pgproto3.BackendMessage
	}{
		{"BEGIN", []pgproto3.BackendMessage{done("BEGIN"), ready('T')}},
		{"SET search_path TO other", []pgproto3.BackendMessage{done("SET"), ready('T')}},
		{"ROLLBACK", []pgproto3.BackendMessage{done("ROLLBACK"), ready('I')}},
		{"INSERT INTO docs (id, user_id) VALUES ('p1', 'ann')", []pgproto3.BackendMessage{done("INSERT 0 1"), ready('I')}},
		{"BEGIN", []pgproto3.BackendMessage{done("BEGIN"), ready('T')}},
		{"SET search_path TO other", []pgproto3.BackendMessage{done("SET"), ready('T')}},
		{"SELECT 1/0", []pgproto3.BackendMessage{failed, ready('E')}},
		{"COMMIT", []pgproto3.BackendMessage{done("ROLLBACK"), ready('I')}},
		{"INSERT INTO docs (id, user_id) VALUES ('p2', 'ann')", []pgproto3.BackendMessage{done("INSERT 0 1"), ready('I')}},
	} {
		c.client(query(step.sql)).server(step.answers...)
	}
	assert.Empty(t, c.refusals)
	assert.Equal(t, []string{"public.docs/p1", "public.docs/p2"}, confirmedAfter(s, l))
}

// A write pipelined behind a SET whose outcome is unknown is tagged for
// every table it may go to.
func TestSession_PipelinedWriteIsTaggedUnderEveryPossiblePath(t *testing.T) {
	s, l := memSession(t, capture.Strict)
	c := &conversation{t: t, s: s}
	c.client(query("SET search_path TO other, public")) // not answered yet
	c.client(query("INSERT INTO docs (id, user_id) VALUES ('x1', 'ann')"))
	c.server(done("SET"), ready('I'), done("INSERT 0 1"), ready('I'))
	c.client(query("INSERT INTO docs (id, user_id) VALUES ('x2', 'ann')")) // public.docs: the first configured on the path
	c.server(done("INSERT 0 1"), ready('I'))
	c.client(query("SET search_path TO other"))
	c.client(query("INSERT INTO docs (id, user_id) VALUES ('x3', 'ann')")) // public.docs if the SET failed
	c.server(done("SET"), ready('I'), done("INSERT 0 1"), ready('I'))
	c.client(query("INSERT INTO docs (id, user_id) VALUES ('o1', 'ann')")) // other.docs
	c.server(done("INSERT 0 1"), ready('I'))
	assert.Equal(t, []string{"public.docs/x1", "public.docs/x2", "public.docs/x3"}, confirmedAfter(s, l))
}
