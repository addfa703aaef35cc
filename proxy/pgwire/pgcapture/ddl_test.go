package pgcapture

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// DDL creating a writer function: writes are refused while the DDL is
// unread, the catalog is read once the server says the session is idle,
// and the next statement is analysed with what that read found.
func TestSession_DDLIsReadFromTheCatalogBeforeTheNextStatement(t *testing.T) {
	s, _ := memSession(t, capture.Strict)
	t.Cleanup(s.capture.Close)
	reads := make(chan struct{}, 10)
	created := false
	wc := NewWriterCatalog(s.capture, func(context.Context) (extract.Writers, error) {
		reads <- struct{}{}
		if created {
			return addDocWrites, nil
		}
		return extract.Writers{}, nil
	})
	require.NoError(t, wc.Refresh(context.Background()))
	<-reads
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go wc.Watch(ctx, time.Hour, time.Hour)
	require.Eventually(t, func() bool { return wc.watching.Load() }, 10*time.Second, time.Millisecond)
	s.o.FollowCatalog(wc)

	query := func(sql string) *pgwire.Refusal { return s.ClientMessage(wire(t, &pgproto3.Query{String: sql})) }
	answer := func(tag string) {
		s.ServerMessage(wire(t, &pgproto3.CommandComplete{CommandTag: []byte(tag)}))
		s.ServerMessage(wire(t, &pgproto3.ReadyForQuery{TxStatus: 'I'}))
	}
	refusedAnswer := func() {
		s.ServerMessage(wire(t, &pgproto3.ErrorResponse{Severity: "ERROR", Code: "LT001"}))
		s.ServerMessage(wire(t, &pgproto3.ReadyForQuery{TxStatus: 'I'}))
	}

	require.Nil(t, query(`CREATE FUNCTION add_doc(i text, u text) RETURNS void LANGUAGE sql AS $$ INSERT INTO docs (id, user_id) VALUES (i, u) $$`))
	created = true // the server ran it
	// Pipelined before the server answered: the catalog cannot know yet.
	r := query(`SELECT add_doc('a', 'ann')`)
	require.NotNil(t, r)
	assert.Contains(t, r.Message, "commit the DDL, then write")
	answer("CREATE FUNCTION")
	refusedAnswer()
	select {
	case <-reads: // read after the DDL's ReadyForQuery
	case <-time.After(30 * time.Second):
		t.Fatal("the catalog was not read after the DDL")
	}

	r = query(`SELECT add_doc('a', 'ann')`)
	require.NotNil(t, r, "the read found the writer before this statement was analysed")
	assert.Contains(t, r.Message, "calls public.add_doc")
	refusedAnswer()
	assert.Nil(t, query(`INSERT INTO docs (id, user_id) VALUES ('b', 'bob')`), "nothing pending any more")
}

// Without a catalog to read, DDL only opens the window until its
// transaction ends.
func TestSession_DDLWithoutCatalogEndsWithTheTransaction(t *testing.T) {
	s, _ := memSession(t, capture.Strict)
	t.Cleanup(s.capture.Close)
	require.Nil(t, s.ClientMessage(wire(t, &pgproto3.Query{String: `BEGIN`})))
	s.ServerMessage(wire(t, &pgproto3.CommandComplete{CommandTag: []byte("BEGIN")}))
	s.ServerMessage(wire(t, &pgproto3.ReadyForQuery{TxStatus: 'T'}))
	require.Nil(t, s.ClientMessage(wire(t, &pgproto3.Query{String: `ALTER TABLE docs RENAME TO docs2`})))
	s.ServerMessage(wire(t, &pgproto3.CommandComplete{CommandTag: []byte("ALTER TABLE")}))
	s.ServerMessage(wire(t, &pgproto3.ReadyForQuery{TxStatus: 'T'}))
	r := s.ClientMessage(wire(t, &pgproto3.Query{String: `INSERT INTO docs2 (id, user_id) VALUES ('a', 'ann')`}))
	require.NotNil(t, r, "in the DDL's transaction")
	s.ServerMessage(wire(t, &pgproto3.ErrorResponse{Severity: "ERROR", Code: "LT001"}))
	s.ServerMessage(wire(t, &pgproto3.ReadyForQuery{TxStatus: 'E'}))
	require.Nil(t, s.ClientMessage(wire(t, &pgproto3.Query{String: `ROLLBACK`})))
	s.ServerMessage(wire(t, &pgproto3.CommandComplete{CommandTag: []byte("ROLLBACK")}))
	s.ServerMessage(wire(t, &pgproto3.ReadyForQuery{TxStatus: 'I'}))
	assert.Nil(t, s.ClientMessage(wire(t, &pgproto3.Query{String: `INSERT INTO docs (id, user_id) VALUES ('a', 'ann')`})))
}

// DDL that changes a configured table's column order: an INSERT without a
// column list sent before the catalog is read again is refused, and the
// next one after the read follows the new order.
func TestSession_InsertWithoutColumnListFollowsTheOrderReadAfterDDL(t *testing.T) {
	s, l := memSession(t, capture.Strict)
	t.Cleanup(s.capture.Close)
	reads := make(chan struct{}, 10)
	order := []string{"body", "id", "user_id"}
	wc := NewWriterCatalog(s.capture, func(context.Context) (extract.Writers, error) {
		reads <- struct{}{}
		return extract.Writers{ColumnOrders: map[string][]string{"public.docs": order}}, nil
	})
	require.NoError(t, wc.Refresh(context.Background()))
	<-reads
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go wc.Watch(ctx, time.Hour, time.Hour)
	require.Eventually(t, func() bool { return wc.watching.Load() }, 10*time.Second, time.Millisecond)
	s.o.FollowCatalog(wc)

	query := func(sql string) *pgwire.Refusal { return s.ClientMessage(wire(t, &pgproto3.Query{String: sql})) }
	answer := func(tag string) {
		s.ServerMessage(wire(t, &pgproto3.CommandComplete{CommandTag: []byte(tag)}))
		s.ServerMessage(wire(t, &pgproto3.ReadyForQuery{TxStatus: 'I'}))
	}

	require.Nil(t, query(`ALTER TABLE docs DROP COLUMN body`))
	order = []string{"id", "user_id"} // the server ran it
	// Pipelined before the server answered: read with the old order, the
	// id would be 'bob'.
	r := query(`INSERT INTO docs VALUES ('a', 'ann')`)
	require.NotNil(t, r)
	assert.Contains(t, r.Message, "column order of public.docs")
	answer("ALTER TABLE")
	s.ServerMessage(wire(t, &pgproto3.ErrorResponse{Severity: "ERROR", Code: "LT001"}))
	s.ServerMessage(wire(t, &pgproto3.ReadyForQuery{TxStatus: 'I'}))
	select {
	case <-reads: // read after the DDL's ReadyForQuery
	case <-time.After(30 * time.Second):
		t.Fatal("the catalog was not read after the DDL")
	}

	require.Nil(t, query(`INSERT INTO docs VALUES ('b', 'bob')`), "the read gave the new order before this statement was analysed")
	answer("INSERT 0 1")
	assert.Equal(t, []string{"public.docs/b"}, confirmedAfter(s, l))
}
