//go:build integration

package integration

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// refusingObserver records what the relay shows it and refuses every
// statement that mentions "forbidden", and every CopyData row containing
// "forbidden", the way the capture layer refuses unattributable writes.
type refusingObserver struct {
	mu       sync.Mutex
	client   []string // "Q:<sql>", "P:<sql>", "B:<params>", "S", "d", ...
	server   []string // "C:<tag>", "Z:<status>", "E:<code>"
	sessions int
	closed   int
}

func (o *refusingObserver) Open(pgwire.SessionInfo) pgwire.Session {
	o.mu.Lock()
	o.sessions++
	o.mu.Unlock()
	return o
}

func (o *refusingObserver) ClientMessage(m pgwire.Message) *pgwire.Refusal {
	o.mu.Lock()
	defer o.mu.Unlock()
	refusal := &pgwire.Refusal{Code: "LT001", Message: "lethe: writes to forbidden tables are refused", Hint: "test hint"}
	switch m.Type {
	case 'Q':
		q, err := m.Query()
		if err != nil {
			panic(err)
		}
		o.client = append(o.client, "Q:"+q)
		if strings.Contains(q, "forbidden") {
			return refusal
		}
	case 'P':
		p, err := m.Parse()
		if err != nil {
			panic(err)
		}
		o.client = append(o.client, "P:"+p.Query)
		if strings.Contains(p.Query, "forbidden") {
			return refusal
		}
	case 'B':
		b, err := m.Bind()
		if err != nil {
			panic(err)
		}
		var params []string
		for _, p := range b.Parameters {
			params = append(params, string(p))
		}
		o.client = append(o.client, "B:"+strings.Join(params, ","))
		if strings.Contains(strings.Join(params, ","), "forbidden") {
			return refusal
		}
	case 'd':
		o.client = append(o.client, "d")
		if bytes.Contains(m.Body, []byte("forbidden")) {
			return refusal
		}
	default:
		o.client = append(o.client, string(m.Type))
	}
	return nil
}

func (o *refusingObserver) ServerMessage(m pgwire.Message) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch m.Type {
	case 'C':
		tag, _ := m.CommandTag()
		o.server = append(o.server, "C:"+tag)
	case 'Z':
		st, _ := m.TxStatus()
		o.server = append(o.server, "Z:"+string(st))
	case 'E':
		e, _ := m.Error()
		o.server = append(o.server, "E:"+e.Code)
	}
}

func (o *refusingObserver) Close() {
	o.mu.Lock()
	o.closed++
	o.mu.Unlock()
}

func (o *refusingObserver) seen() (client, server []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.client...), append([]string(nil), o.server...)
}

func (o *refusingObserver) reset() {
	o.mu.Lock()
	o.client, o.server = nil, nil
	o.mu.Unlock()
}

func observedProxy(t *testing.T, db testDB) (*proxy, *refusingObserver) {
	obs := &refusingObserver{}
	return startProxy(t, db, func(s *pgwire.Server) { s.Observer = obs }), obs
}

func assertRefused(t *testing.T, err error) {
	t.Helper()
	require.Error(t, err)
	assert.Equal(t, "LT001", pgCode(err))
	assert.Equal(t, "lethe: writes to forbidden tables are refused", pgMessage(err))
	assertNoServerContext(t, err)
}

func countRows(t *testing.T, db testDB, table string) int {
	var n int
	require.NoError(t, connect(t, db.URL(db.Addr(), "")).QueryRow(ctxT(t), "SELECT count(*) FROM "+table).Scan(&n))
	return n
}

func TestObserver_SeesStatementsParametersAndCompletions(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "observed", "id int, v text")
	p, obs := observedProxy(t, db)
	conn := connect(t, db.URL(p.Addr, ""))
	obs.reset()

	_, err := conn.Exec(ctxT(t), "INSERT INTO observed VALUES ($1, $2)", 7, "seven")
	require.NoError(t, err)
	client, server := obs.seen()
	assert.Contains(t, client, "P:INSERT INTO observed VALUES ($1, $2)")
	assert.Contains(t, client, "B:\x00\x00\x00\x07,seven", "parameters as pgx sends them: int4 binary, text")
	assert.Contains(t, server, "C:INSERT 0 1")
	assert.Equal(t, "Z:I", server[len(server)-1])

	obs.reset()
	tx, err := conn.Begin(ctxT(t))
	require.NoError(t, err)
	_, err = tx.Exec(ctxT(t), "SELECT 1")
	require.NoError(t, err)
	_, server = obs.seen()
	assert.Equal(t, "Z:T", server[len(server)-1], "in a transaction block")
	_, err = tx.Exec(ctxT(t), "SELECT 1/0")
	require.Error(t, err)
	_, server = obs.seen()
	assert.Equal(t, []string{"E:22012", "Z:E"}, server[len(server)-2:], "failed transaction block")
	require.NoError(t, tx.Rollback(ctxT(t)))
}

func TestObserver_RefusedSimpleQueryAbortsLikeAServerError(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "forbidden_simple", "id int")
	p, _ := observedProxy(t, db)
	conn := connect(t, db.URL(p.Addr, "default_query_exec_mode=simple_protocol"))

	_, err := conn.Exec(ctxT(t), "INSERT INTO forbidden_simple VALUES (1)")
	assertRefused(t, err)
	require.NoError(t, conn.Ping(ctxT(t)), "the connection stays usable")

	// Inside a transaction block the refusal aborts the block.
	_, err = conn.Exec(ctxT(t), "BEGIN")
	require.NoError(t, err)
	_, err = conn.Exec(ctxT(t), "INSERT INTO forbidden_simple VALUES (2)")
	assertRefused(t, err)
	_, err = conn.Exec(ctxT(t), "SELECT 1")
	assert.Equal(t, "25P02", pgCode(err), "in_failed_sql_transaction")
	_, err = conn.Exec(ctxT(t), "COMMIT")
	require.NoError(t, err) // answered ROLLBACK
	assert.Equal(t, 0, countRows(t, db, "forbidden_simple"))
}

func TestObserver_RefusedExtendedStatementFailsTheWholePipeline(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "allowed_rows", "id int")
	pgxTable(t, db, "forbidden_rows", "id int")
	p, _ := observedProxy(t, db)
	conn := connect(t, db.URL(p.Addr, ""))

	// Refused at Parse.
	_, err := conn.Exec(ctxT(t), "INSERT INTO forbidden_rows VALUES ($1)", 1)
	assertRefused(t, err)
	require.NoError(t, conn.Ping(ctxT(t)))

	// Refused at Bind (the parameter), in the middle of a pipeline: the
	// statements before it roll back with the implicit transaction, as they
	// would after any server error.
	b := &pgx.Batch{}
	b.Queue("INSERT INTO allowed_rows VALUES ($1)", 1)
	b.Queue("INSERT INTO allowed_rows VALUES ($1::int)", "2")
	b.Queue("SELECT $1::text", "forbidden value")
	b.Queue("INSERT INTO allowed_rows VALUES ($1)", 3)
	assertRefused(t, conn.SendBatch(ctxT(t), b).Close())
	assert.Equal(t, 0, countRows(t, db, "allowed_rows"))

	// A later pipeline on the same connection works, and named statements
	// prepared before the refusal still run.
	b = &pgx.Batch{}
	b.Queue("INSERT INTO allowed_rows VALUES ($1)", 1)
	b.Queue("INSERT INTO allowed_rows VALUES ($1::int)", "2")
	require.NoError(t, conn.SendBatch(ctxT(t), b).Close())
	assert.Equal(t, 2, countRows(t, db, "allowed_rows"))

	// Inside an explicit transaction the block is aborted.
	tx, err := conn.Begin(ctxT(t))
	require.NoError(t, err)
	_, err = tx.Exec(ctxT(t), "INSERT INTO allowed_rows VALUES ($1)", 10)
	require.NoError(t, err)
	_, err = tx.Exec(ctxT(t), "SELECT $1::text", "forbidden")
	assertRefused(t, err)
	_, err = tx.Exec(ctxT(t), "SELECT 1")
	assert.Equal(t, "25P02", pgCode(err))
	require.NoError(t, tx.Rollback(ctxT(t)))
	assert.Equal(t, 2, countRows(t, db, "allowed_rows"))
}

func TestObserver_RefusedCopyDataAbortsTheCopy(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "copy_refused", "id int, v text")
	p, _ := observedProxy(t, db)
	conn := connect(t, db.URL(p.Addr, ""))

	rows := [][]any{{1, "fine"}, {2, "forbidden"}, {3, "fine"}}
	_, err := conn.CopyFrom(ctxT(t), pgx.Identifier{"copy_refused"}, []string{"id", "v"}, pgx.CopyFromRows(rows))
	require.Error(t, err)
	assert.Equal(t, "57014", pgCode(err), "CopyFail is reported as query_canceled")
	assert.Contains(t, pgMessage(err), "lethe: writes to forbidden tables are refused")
	assert.Equal(t, 0, countRows(t, db, "copy_refused"))
	require.NoError(t, conn.Ping(ctxT(t)))
}
