package ledger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// testPGConnString is the test cluster started by scripts/testdb.sh. The
// PostgreSQL backend is half of the product, so its tests fail, rather
// than skip, when there is no cluster.
func testPGConnString(t testing.TB) string {
	t.Helper()
	if os.Getenv("LETHE_TEST_PG_PORT") == "" {
		t.Fatal(`LETHE_TEST_PG_PORT is not set: run scripts/test.sh, or start the test cluster with scripts/testdb.sh start and eval "$(scripts/testdb.sh env)"`)
	}
	return pgConnString(os.Getenv("LETHE_TEST_PG_HOST"), os.Getenv("LETHE_TEST_PG_PORT"))
}

func pgConnString(host, port string) string {
	return fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=%s connect_timeout=5",
		host, port, os.Getenv("LETHE_TEST_PG_USER"), os.Getenv("LETHE_TEST_PG_PASSWORD"), os.Getenv("LETHE_TEST_PG_DB"))
}

// freshPGSchema names a schema no other test uses and drops it when t ends.
func freshPGSchema(t testing.TB, conn string) string {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	schema := "lethe_ledger_test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, conn)
		if err != nil {
			t.Errorf("drop test schema %s: %v", schema, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("drop test schema %s: %v", schema, err)
		}
	})
	return schema
}

var pgBackend = backend{
	newStore: func(t *testing.T) (func(t *testing.T) Ledger, func(t *testing.T) []byte) {
		conn := testPGConnString(t)
		schema := freshPGSchema(t, conn)
		open := func(t *testing.T) Ledger {
			l, err := OpenPostgres(context.Background(), conn, Options{Schema: schema})
			require.NoError(t, err)
			return l
		}
		// dump is the text of every row of every ledger table.
		dump := func(t *testing.T) []byte {
			ctx := context.Background()
			c, err := pgx.Connect(ctx, conn)
			require.NoError(t, err)
			defer c.Close(ctx)
			var all []byte
			for _, tbl := range []string{"intents", "entries", "schema_version", "forget_requests", "tombstones"} {
				var text string
				require.NoError(t, c.QueryRow(ctx, fmt.Sprintf(`SELECT coalesce(string_agg(t::text, E'\n'), '') FROM %s.%s t`,
					pgx.Identifier{schema}.Sanitize(), tbl)).Scan(&text))
				all = append(all, text...)
			}
			return all
		}
		return open, dump
	},
}

func TestPostgres_Contract(t *testing.T) {
	testPGConnString(t) // fail once, not in every subtest, without a cluster
	runContract(t, pgBackend)
}

func TestPostgres_OpenOnClosedPortIsUnavailable(t *testing.T) {
	testPGConnString(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	_, err = OpenPostgres(context.Background(), pgConnString("127.0.0.1", port), Options{})
	require.ErrorIs(t, err, ErrUnavailable)
}

func TestPostgres_IntendWhenDatabaseGoneIsUnavailable(t *testing.T) {
	conn := testPGConnString(t)
	schema := freshPGSchema(t, conn)
	relay := startTCPRelay(t, os.Getenv("LETHE_TEST_PG_HOST")+":"+os.Getenv("LETHE_TEST_PG_PORT"))
	host, port, _ := net.SplitHostPort(relay.addr)
	l, err := OpenPostgres(context.Background(), pgConnString(host, port), Options{Schema: schema, CommitTimeout: 3 * time.Second})
	require.NoError(t, err)
	defer l.Close()
	_, err = l.Intend(context.Background(), []Entry{entry("public.docs", "1", "alice")})
	require.NoError(t, err)

	relay.cut() // the database goes away: existing connections die, new ones are refused
	_, err = l.Intend(context.Background(), []Entry{entry("public.docs", "2", "alice")})
	require.ErrorIs(t, err, ErrUnavailable)
	_, err = l.BySubject(context.Background(), testHasher.Hash("alice"))
	require.ErrorIs(t, err, ErrUnavailable)
}

func TestPostgres_ConcurrentOpenMigratesOnce(t *testing.T) {
	conn := testPGConnString(t)
	schema := freshPGSchema(t, conn)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := OpenPostgres(context.Background(), conn, Options{Schema: schema})
			if err == nil {
				l.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err, "proxies starting together must all open the ledger")
	}
	c, err := pgx.Connect(context.Background(), conn)
	require.NoError(t, err)
	defer c.Close(context.Background())
	var rows, version int
	require.NoError(t, c.QueryRow(context.Background(),
		`SELECT count(*), max(version) FROM `+pgx.Identifier{schema}.Sanitize()+`.schema_version`).Scan(&rows, &version))
	require.Equal(t, 1, rows)
	require.Equal(t, len(pgMigrations), version)
}

func TestPostgres_SessionsCommitSynchronously(t *testing.T) {
	conn := testPGConnString(t)
	schema := freshPGSchema(t, conn)
	l, err := OpenPostgres(context.Background(), conn+" options='-c synchronous_commit=off'", Options{Schema: schema})
	require.NoError(t, err)
	defer l.Close()
	var setting string
	require.NoError(t, l.pool.QueryRow(context.Background(), `SHOW synchronous_commit`).Scan(&setting))
	require.Equal(t, "on", setting)
}

// tcpRelay forwards connections to a backend until cut, standing in for a
// database that becomes unreachable.
type tcpRelay struct {
	addr  string
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startTCPRelay(t *testing.T, backendAddr string) *tcpRelay {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &tcpRelay{addr: ln.Addr().String(), ln: ln}
	t.Cleanup(r.cut)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", backendAddr)
			if err != nil {
				c.Close()
				continue
			}
			r.mu.Lock()
			r.conns = append(r.conns, c, b)
			r.mu.Unlock()
			go func() { io.Copy(b, c); b.Close() }()
			go func() { io.Copy(c, b); c.Close() }()
		}
	}()
	return r
}

func (r *tcpRelay) cut() {
	r.ln.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}

// TestPostgres_IntentNoSyncCommitsWithoutWaitingForTheDisk: a trigger on
// the intents table records the synchronous_commit each intent's
// transaction ran under: on by default, off with IntentNoSync (the commit
// returns before the server flushes its WAL; the intent survives a kill -9
// of the proxy, not a crash of the ledger's server).
func TestPostgres_IntentNoSyncCommitsWithoutWaitingForTheDisk(t *testing.T) {
	conn := testPGConnString(t)
	pinecone := Entry{Store: StorePinecone, Table: "idx/ns", RecordID: "v1", Subject: testHasher.Hash("alice")}
	for _, tc := range []struct {
		name     string
		sync     IntentSync
		followed []Store
		entry    Entry
		want     string
	}{
		{"durable", IntentDurable, nil, entry("public.docs", "1", "alice"), "on"},
		{"nosync", IntentNoSync, nil, entry("public.docs", "1", "alice"), "off"},
		{"nosync-followed", IntentNoSync, []Store{StorePostgres}, entry("public.docs", "1", "alice"), "off"},
		// Nothing follows Pinecone: its intent waits for the disk.
		{"nosync-unfollowed-store", IntentNoSync, []Store{StorePostgres}, pinecone, "on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			schema := freshPGSchema(t, conn)
			l, err := OpenPostgres(ctx, conn, Options{Schema: schema, IntentSync: tc.sync, FollowedStores: tc.followed})
			require.NoError(t, err)
			defer l.Close()
			s := pgx.Identifier{schema}.Sanitize()
			_, err = l.pool.Exec(ctx, `
				CREATE TABLE `+s+`.seen (setting text);
				CREATE FUNCTION `+s+`.record_sync() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
					INSERT INTO `+s+`.seen VALUES (current_setting('synchronous_commit'));
					RETURN NEW;
				END $$;
				CREATE TRIGGER record_sync AFTER INSERT ON `+s+`.intents FOR EACH ROW EXECUTE FUNCTION `+s+`.record_sync();`)
			require.NoError(t, err)

			id := intend(t, l, tc.entry)
			var seen []string
			rows, err := l.pool.Query(ctx, `SELECT setting FROM `+s+`.seen`)
			require.NoError(t, err)
			seen, err = pgx.CollectRows(rows, pgx.RowTo[string])
			require.NoError(t, err)
			require.Equal(t, []string{tc.want}, seen, "synchronous_commit of the intent's transaction")
			require.Equal(t, []IntentID{id}, pendingIDs(t, l), "the intent is pending")
		})
	}
}
