//go:build integration

package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pgxTable creates a fresh table for one test, directly on the server.
func pgxTable(t *testing.T, db testDB, name, columns string) {
	t.Helper()
	direct := connect(t, db.URL(db.Addr(), ""))
	_, err := direct.Exec(ctxT(t), fmt.Sprintf("DROP TABLE IF EXISTS %s; CREATE TABLE %s (%s)", name, name, columns))
	require.NoError(t, err)
	t.Cleanup(func() {
		c := connect(t, db.URL(db.Addr(), ""))
		c.Exec(ctxT(t), "DROP TABLE IF EXISTS "+name)
	})
}

func TestPgx_ExecModesThroughProxy(t *testing.T) {
	db := loadTestDB(t)
	p := startProxy(t, db, nil)
	for _, mode := range []string{"cache_statement", "cache_describe", "describe_exec", "exec", "simple_protocol"} {
		t.Run(mode, func(t *testing.T) {
			conn := connect(t, db.URL(p.Addr, "default_query_exec_mode="+mode))
			for i := range 50 { // repeated: pgx reuses its stmtcache_* statements with Bind only
				var n int64
				var s string
				err := conn.QueryRow(ctxT(t), "SELECT $1::int8 * 2, $2::text || '!'", i, "hi").Scan(&n, &s)
				require.NoError(t, err)
				require.Equal(t, int64(2*i), n)
				require.Equal(t, "hi!", s)
			}
			var v string
			require.NoError(t, conn.QueryRow(ctxT(t), "SELECT '[1,2,3]'::vector::text").Scan(&v))
			assert.Equal(t, "[1,2,3]", v)
		})
	}
}

func TestPgx_CopyFromBinary(t *testing.T) {
	db := loadTestDB(t)
	p := startProxy(t, db, nil)
	pgxTable(t, db, "copy_pgx", "id int8 PRIMARY KEY, body text, data bytea")
	conn := connect(t, db.URL(p.Addr, ""))

	const rows = 20000 // many CopyData messages, several buffer refills
	src := pgx.CopyFromSlice(rows, func(i int) ([]any, error) {
		return []any{int64(i), strings.Repeat("x", i%300), []byte{byte(i), byte(i >> 8)}}, nil
	})
	n, err := conn.CopyFrom(ctxT(t), pgx.Identifier{"copy_pgx"}, []string{"id", "body", "data"}, src)
	require.NoError(t, err)
	require.Equal(t, int64(rows), n)

	direct := connect(t, db.URL(db.Addr(), ""))
	var count, bodyLen int64
	require.NoError(t, direct.QueryRow(ctxT(t), "SELECT count(*), sum(length(body)) FROM copy_pgx").Scan(&count, &bodyLen))
	assert.Equal(t, int64(rows), count)
	var want int64
	for i := range rows {
		want += int64(i % 300)
	}
	assert.Equal(t, want, bodyLen)
}

func TestPgx_SendBatchPipelines(t *testing.T) {
	db := loadTestDB(t)
	p := startProxy(t, db, nil)
	pgxTable(t, db, "batch_pgx", "id int PRIMARY KEY, v text")
	conn := connect(t, db.URL(p.Addr, ""))

	batch := &pgx.Batch{}
	for i := range 300 { // many Bind/Execute before one Sync
		batch.Queue("INSERT INTO batch_pgx (id, v) VALUES ($1, $2)", i, fmt.Sprint("v", i))
	}
	batch.Queue("SELECT count(*) FROM batch_pgx")
	res := conn.SendBatch(ctxT(t), batch)
	for range 300 {
		tag, err := res.Exec()
		require.NoError(t, err)
		require.Equal(t, "INSERT 0 1", tag.String())
	}
	var count int
	require.NoError(t, res.QueryRow().Scan(&count))
	require.NoError(t, res.Close())
	assert.Equal(t, 300, count)

	// An error in the middle of a pipeline fails the rest of the implicit
	// transaction, exactly as without the proxy.
	bad := &pgx.Batch{}
	bad.Queue("INSERT INTO batch_pgx (id, v) VALUES (1000, 'a')")
	bad.Queue("INSERT INTO batch_pgx (id, v) VALUES (1, 'duplicate')")
	bad.Queue("INSERT INTO batch_pgx (id, v) VALUES (1001, 'b')")
	err := conn.SendBatch(ctxT(t), bad).Close()
	require.Error(t, err)
	assert.Equal(t, "23505", pgCode(err))
	require.NoError(t, conn.QueryRow(ctxT(t), "SELECT count(*) FROM batch_pgx WHERE id >= 1000").Scan(&count))
	assert.Equal(t, 0, count)
}

func TestPgx_ListenNotifyThroughProxy(t *testing.T) {
	db := loadTestDB(t)
	p := startProxy(t, db, nil)
	listener := connect(t, db.URL(p.Addr, ""))
	notifier := connect(t, db.URL(p.Addr, ""))
	_, err := listener.Exec(ctxT(t), "LISTEN lethe_events")
	require.NoError(t, err)
	_, err = notifier.Exec(ctxT(t), "SELECT pg_notify('lethe_events', 'hello ' || 42)")
	require.NoError(t, err)
	n, err := listener.WaitForNotification(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, "lethe_events", n.Channel)
	assert.Equal(t, "hello 42", n.Payload)

	// NOTICE and ParameterStatus arrive mid-session, too.
	var notices []string
	cfg, err := pgx.ParseConfig(db.URL(p.Addr, ""))
	require.NoError(t, err)
	cfg.OnNotice = func(_ *pgconnPgConn, n *pgconnNotice) { notices = append(notices, n.Message) }
	conn, err := pgx.ConnectConfig(ctxT(t), cfg)
	require.NoError(t, err)
	defer conn.Close(ctxT(t))
	_, err = conn.Exec(ctxT(t), "DO $$BEGIN RAISE NOTICE 'note %', 7; END$$")
	require.NoError(t, err)
	assert.Equal(t, []string{"note 7"}, notices)
	_, err = conn.Exec(ctxT(t), "SET application_name = 'lethe-test-app'")
	require.NoError(t, err)
	assert.Equal(t, "lethe-test-app", conn.PgConn().ParameterStatus("application_name"))
}

func TestPgx_NegotiateProtocolVersionPassesThrough(t *testing.T) {
	db := loadTestDB(t)
	p := startProxy(t, db, nil)
	// A client asking for protocol 3.2 is told by PostgreSQL 15 (through
	// the proxy) that it speaks 3.0, and carries on.
	conn := connect(t, db.URL(p.Addr, "max_protocol_version=3.2"))
	require.NoError(t, conn.Ping(ctxT(t)))
	// A client that insists on 3.2 sees the same NegotiateProtocolVersion
	// and gives up, exactly as it does when connected directly.
	_, errDirect := tryConnect(t, db.URL(db.Addr(), "max_protocol_version=3.2&min_protocol_version=3.2"))
	_, errProxy := tryConnect(t, db.URL(p.Addr, "max_protocol_version=3.2&min_protocol_version=3.2"))
	require.Error(t, errDirect)
	require.Error(t, errProxy)
	assert.Contains(t, errProxy.Error(), "server protocol version too low")
}
