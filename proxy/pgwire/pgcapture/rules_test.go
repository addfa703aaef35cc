package pgcapture

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
)

var addDocWrites = extract.Writers{Functions: []extract.WriterFunction{{Schema: "public", Name: "add_doc", Tables: []string{"public.docs"}}}}

// callAddDoc binds and executes the prepared statement "call".
func callAddDoc() []pgproto3.FrontendMessage {
	return []pgproto3.FrontendMessage{
		&pgproto3.Bind{PreparedStatement: "call", Parameters: [][]byte{[]byte("a"), []byte("ann")}},
		&pgproto3.Execute{}, &pgproto3.Sync{},
	}
}

// A statement prepared before the catalog said add_doc writes docs is
// analysed again when the rules change: pgx prepares once per connection
// and executes for ever.
func TestSession_NewRulesReanalysePreparedStatements(t *testing.T) {
	s, _ := memSession(t, capture.Strict)
	defer s.capture.Close()
	base := s.capture.Rules()
	c := &conversation{t: t, s: s}
	c.client(&pgproto3.Parse{Name: "call", Query: "SELECT add_doc($1, $2)"})
	c.client(callAddDoc()...).server(done("SELECT 1"), ready('I'))
	assert.Empty(t, c.refusals, "add_doc is not known to write yet")

	s.capture.SetRules(base.WithWriters(addDocWrites))
	c.client(callAddDoc()...).server(ready('I'))
	assert.Equal(t, []string{capture.CodeUnattributed}, c.refusals, "the prepared statement was analysed again")
	c.client(query("SELECT add_doc('b', 'bob')")).server(ready('I'))
	assert.Equal(t, []string{capture.CodeUnattributed, capture.CodeUnattributed}, c.refusals, "and so is a new Query")

	s.capture.SetRules(base)
	c.refusals = nil
	c.client(callAddDoc()...).server(done("SELECT 1"), ready('I'))
	assert.Empty(t, c.refusals, "writers dropped from the catalog are allowed again")
}

func TestSession_PermissiveRecordsCallsOfWritersAsUnattributed(t *testing.T) {
	s, l := memSession(t, capture.Permissive)
	s.capture.SetRules(s.capture.Rules().WithWriters(addDocWrites))
	c := &conversation{t: t, s: s}
	c.client(&pgproto3.Parse{Name: "call", Query: "SELECT add_doc($1, $2)"})
	c.client(callAddDoc()...).server(done("SELECT 1"), ready('I'))
	assert.Empty(t, c.refusals)
	assert.Equal(t, []string{"public.docs/"}, confirmedAfter(s, l), "one unattributed write of docs")
}

func TestWriterCatalog_RefreshReplacesRulesOnlyWhenWritersChange(t *testing.T) {
	s, _ := memSession(t, capture.Strict)
	defer s.capture.Close()
	found, fail := addDocWrites, error(nil)
	wc := NewWriterCatalog(s.capture, func(context.Context) (extract.Writers, error) { return found, fail })
	base := s.capture.Rules()

	require.NoError(t, wc.Refresh(context.Background()))
	withWriters := s.capture.Rules()
	assert.NotSame(t, base, withWriters)
	assert.True(t, withWriters.Mentions("SELECT add_doc(1)"))

	require.NoError(t, wc.Refresh(context.Background()))
	assert.Same(t, withWriters, s.capture.Rules(), "same writers: sessions keep their caches")

	fail = errors.New("store down")
	assert.Error(t, wc.Refresh(context.Background()))
	assert.Same(t, withWriters, s.capture.Rules(), "a failed read keeps the last writers")

	found, fail = extract.Writers{}, nil
	require.NoError(t, wc.Refresh(context.Background()))
	assert.False(t, s.capture.Rules().Mentions("SELECT add_doc(1)"))
}

func TestWriterCatalog_WatchRetriesAndStopsWithTheCapture(t *testing.T) {
	s, _ := memSession(t, capture.Strict)
	calls := make(chan struct{}, 100)
	wc := NewWriterCatalog(s.capture, func(context.Context) (extract.Writers, error) {
		calls <- struct{}{}
		return extract.Writers{}, errors.New("store down")
	})
	stopped := make(chan struct{})
	go func() {
		wc.Watch(context.Background(), time.Hour, time.Millisecond)
		close(stopped)
	}()
	<-calls
	<-calls // retried well before the hour
	s.capture.Close()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Watch did not stop when the capture closed")
	}
}

// A simple-protocol INSERT whose shape was analysed under the old rules is
// analysed again under the new ones: psycopg2 sends the same INSERT with
// other literals for ever.
func TestSession_NewRulesReanalyseInsertShapes(t *testing.T) {
	s, _ := memSession(t, capture.Strict)
	defer s.capture.Close()
	c := &conversation{t: t, s: s}
	c.client(query("INSERT INTO messages (id, body) VALUES ('m1', 'hello')")).server(done("INSERT 0 1"), ready('I'))
	assert.Empty(t, c.refusals, "messages is not configured and fires nothing yet")

	s.capture.SetRules(s.capture.Rules().WithWriters(extract.Writers{Fired: []extract.FiredRelation{
		{Schema: "public", Name: "messages", By: "trigger embed_message", Events: extract.OnInsert, Tables: []string{"public.docs"}},
	}}))
	c.client(query("INSERT INTO messages (id, body) VALUES ('m2', 'again')")).server(ready('I'))
	assert.Equal(t, []string{capture.CodeUnattributed}, c.refusals, "the trigger's write to docs cannot be attributed")
}
