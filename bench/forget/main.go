// Command forget measures a whole forget: a subject with ROWS records split
// over two tables, among OTHERS records of other subjects, from the
// confirmed Forget call to the certificate being issued (delete, verify,
// VACUUM off, sign, log append, inclusion proof), run in process against
// the test cluster with an SQLite ledger holding the subject's tags.
//
//	go run ./bench/forget            # ROWS=10000 OTHERS=1000000 R=3 DIM=16
//
// Environment: ROWS, OTHERS, R, DIM, BENCH_DB [lethe_bench], and the
// LETHE_TEST_PG_* variables of scripts/testdb.sh env. The tables are built
// once (INSERT … SELECT from generate_series) and kept between runs; each
// round re-inserts the subject's rows.
package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
	"github.com/lethe-privacy/lethe/translog"
)

func env(k string, def int) int {
	if v := os.Getenv(k); v != "" {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			log.Fatalf("%s=%q: %v", k, v, err)
		}
		return int(n)
	}
	return def
}

const subject = "bench-subject@example.com"

func main() {
	rows, others, rounds, dim := env("ROWS", 10000), env("OTHERS", 1000000), env("R", 3), env("DIM", 16)
	dbName := os.Getenv("BENCH_DB")
	if dbName == "" {
		dbName = "lethe_bench"
	}
	ctx := context.Background()
	dsn := func(db string) string {
		return fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=%s sslmode=disable",
			os.Getenv("LETHE_TEST_PG_HOST"), os.Getenv("LETHE_TEST_PG_PORT"), os.Getenv("LETHE_TEST_PG_USER"), os.Getenv("LETHE_TEST_PG_PASSWORD"), db)
	}
	admin, err := pgx.Connect(ctx, dsn(os.Getenv("LETHE_TEST_PG_DB")))
	check(err, "connect (run eval \"$(scripts/testdb.sh env)\" first)")
	admin.Exec(ctx, "CREATE DATABASE "+dbName) // exists after the first run
	admin.Close(ctx)
	conn, err := pgx.Connect(ctx, dsn(dbName))
	check(err, "connect to "+dbName)
	defer conn.Close(ctx)
	prepareTables(ctx, conn, others, dim)

	dir, err := os.MkdirTemp("", "lethe-forget-bench-")
	check(err, "temp dir")
	defer os.RemoveAll(dir)
	l, err := ledger.OpenSQLite(filepath.Join(dir, "ledger.db"), ledger.Options{})
	check(err, "ledger")
	defer l.Close()
	salt := make([]byte, 32)
	rand.Read(salt)
	h, err := ledger.NewHasher(salt)
	check(err, "hasher")
	e := newEngine(ctx, l, h, dsn(dbName))
	defer e.Close()

	fmt.Printf("forget bench: %d subject rows over 2 tables, %d other rows, vector(%d), %d rounds\n", rows, others, dim, rounds)
	var took []time.Duration
	for r := 0; r < rounds; r++ {
		if _, err := l.LiftTombstone(ctx, h.Hash(subject)); err != nil {
			check(err, "lift")
		}
		insertSubject(ctx, conn, l, h, rows, dim)
		pv, err := e.Preview(ctx, subject)
		check(err, "preview")
		start := time.Now()
		rc, err := e.Forget(ctx, subject, pv.Token)
		check(err, "forget")
		for {
			st, err := e.Status(ctx, rc.RequestID)
			check(err, "status")
			if st.Status != ledger.ForgetReceived {
				if st.Status != ledger.ForgetCompleted {
					log.Fatalf("forget %s: %s", st.Status, st.Error)
				}
				break
			}
			if time.Since(start) > 5*time.Minute {
				log.Fatalf("forget %s did not finish in 5 minutes", rc.RequestID)
			}
			time.Sleep(time.Millisecond)
		}
		d := time.Since(start)
		took = append(took, d)
		cert, err := e.Certificate(ctx, rc.RequestID)
		check(err, "certificate")
		if v := e.Verify(cert); v.Verdict != "valid" {
			log.Fatalf("certificate: %s %s", v.Verdict, v.Reason)
		}
		fmt.Printf("round %d: forget → certificate %v (preview listed %d+%d rows)\n", r+1, d.Round(time.Millisecond), pv.Layers[0].Rows, pv.Layers[1].Rows)
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	fmt.Printf("median %v  (target ≤ 2s)\n", took[len(took)/2].Round(time.Millisecond))
}

// prepareTables builds bench_forget_chunks (uuid id, metadata jsonb with
// user_id, as LangChain) and bench_forget_memories (bigserial id, user_id
// column, as mem0/LlamaIndex-like), others/2 rows each, with the indexes an
// application filtering by user has.
func prepareTables(ctx context.Context, conn *pgx.Conn, others, dim int) {
	var n int64
	err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM bench_forget_chunks) + (SELECT count(*) FROM bench_forget_memories)`).Scan(&n)
	if err == nil && n >= int64(others) {
		createIndexes(ctx, conn)
		return
	}
	fmt.Printf("building %d rows (once)…\n", others)
	_, err = conn.Exec(ctx, fmt.Sprintf(`
		CREATE EXTENSION IF NOT EXISTS vector;
		DROP TABLE IF EXISTS bench_forget_chunks, bench_forget_memories;
		CREATE TABLE bench_forget_chunks (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), content text, metadata jsonb, embedding vector(%[1]d));
		CREATE TABLE bench_forget_memories (id bigserial PRIMARY KEY, user_id text, embedding vector(%[1]d));
		INSERT INTO bench_forget_chunks (content, metadata, embedding)
			SELECT 'chunk ' || g, jsonb_build_object('user_id', 'user' || (g %% 50000) || '@example.com', 'page', g),
				array_fill(0.5::real, ARRAY[%[1]d])::vector FROM generate_series(1, %[2]d) g;
		INSERT INTO bench_forget_memories (user_id, embedding)
			SELECT 'user' || (g %% 50000) || '@example.com', array_fill(0.25::real, ARRAY[%[1]d])::vector FROM generate_series(1, %[2]d) g;
		ANALYZE bench_forget_chunks; ANALYZE bench_forget_memories;`, dim, others/2))
	check(err, "build tables")
	createIndexes(ctx, conn)
}

// createIndexes adds what docs/forget.md recommends for a subject kept in
// JSON: a btree on the ->> form (scalar subjects) and a GIN on the -> form
// (arrays), so that forget reads through indexes instead of scanning.
func createIndexes(ctx context.Context, conn *pgx.Conn) {
	for _, q := range []string{
		`CREATE INDEX IF NOT EXISTS bench_forget_chunks_uid ON bench_forget_chunks ((metadata->>'user_id'))`,
		`CREATE INDEX IF NOT EXISTS bench_forget_chunks_uid_gin ON bench_forget_chunks USING gin ((metadata->'user_id'))`,
		`CREATE INDEX IF NOT EXISTS bench_forget_memories_uid ON bench_forget_memories (user_id)`,
		`VACUUM ANALYZE bench_forget_chunks`, `VACUUM ANALYZE bench_forget_memories`,
	} {
		_, err := conn.Exec(ctx, q)
		check(err, q)
	}
}

// insertSubject writes the subject's rows directly and records their tags
// in the ledger, as capture would have.
func insertSubject(ctx context.Context, conn *pgx.Conn, l *ledger.SQLite, h *ledger.Hasher, rows, dim int) {
	var ids []string
	r, err := conn.Query(ctx, fmt.Sprintf(`INSERT INTO bench_forget_chunks (content, metadata, embedding)
		SELECT 'mine', jsonb_build_object('user_id', $1::text), array_fill(0.75::real, ARRAY[%d])::vector FROM generate_series(1, $2::int)
		RETURNING id::text`, dim), subject, rows/2)
	check(err, "insert chunks")
	chunkIDs, err := pgx.CollectRows(r, pgx.RowTo[string])
	check(err, "insert chunks")
	r, err = conn.Query(ctx, fmt.Sprintf(`INSERT INTO bench_forget_memories (user_id, embedding)
		SELECT $1::text, array_fill(0.75::real, ARRAY[%d])::vector FROM generate_series(1, $2::int) RETURNING id::text`, dim), subject, rows-rows/2)
	check(err, "insert memories")
	memIDs, err := pgx.CollectRows(r, pgx.RowTo[string])
	check(err, "insert memories")
	ids = append(ids, chunkIDs...)
	hs := h.Hash(subject)
	for table, list := range map[string][]string{"public.bench_forget_chunks": chunkIDs, "public.bench_forget_memories": memIDs} {
		for i := 0; i < len(list); i += 500 {
			var entries []ledger.Entry
			for _, id := range list[i:min(i+500, len(list))] {
				entries = append(entries, ledger.Entry{Store: ledger.StorePostgres, Table: table, RecordID: id, Subject: hs})
			}
			in, err := l.Intend(ctx, entries)
			check(err, "intend")
			check(l.Confirm(ctx, in), "confirm")
		}
	}
	_ = ids
}

func newEngine(ctx context.Context, l *ledger.SQLite, h *ledger.Hasher, dsn string) *engine.Engine {
	store, err := pgstore.Open(ctx, dsn)
	check(err, "store")
	var layers []connector.Layer
	for _, t := range []pgstore.Table{
		{Schema: "public", Name: "bench_forget_chunks", ID: "id", Subjects: []pgstore.Subject{{Column: "metadata", Path: []string{"user_id"}}}},
		{Schema: "public", Name: "bench_forget_memories", ID: "id", Subjects: []pgstore.Subject{{Column: "user_id"}}},
	} {
		pl, err := pgstore.NewLayer(ctx, store, t, false)
		check(err, "layer")
		layers = append(layers, pl)
	}
	signer, err := certificate.GenerateKey(rand.Reader)
	check(err, "key")
	const origin = "bench.lethe/forget-log"
	keys, err := certificate.NewKeySet(origin, signer.TrustedKey(time.Unix(0, 0)))
	check(err, "keys")
	tl, err := translog.New(l.TransparencyLog(), signer.NoteSigner(origin), origin)
	check(err, "log")
	e, err := engine.New(engine.Config{
		Ledger: l, Hasher: h, Layers: layers,
		Certifier: engine.NewCertifier(engine.CertifierConfig{Signer: signer, Keys: keys, Log: tl, Tool: "bench",
			RulesSHA256: "0000000000000000000000000000000000000000000000000000000000000000"}),
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	check(err, "engine")
	return e
}

func check(err error, what string) {
	if err != nil {
		log.Fatalf("%s: %v", what, err)
	}
}
