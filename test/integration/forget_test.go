//go:build integration

package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgcapture"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
	"github.com/lethe-privacy/lethe/translog"
)

// forgetRig is a capturing proxy and a forget engine sharing one SQLite
// ledger, as lethe-proxy serve wires them.
type forgetRig struct {
	proxy   *proxy
	capture *capture.Capture
	ledger  engine.Ledger
	hasher  *ledger.Hasher
	engine  *engine.Engine
	keys    certificate.KeySet
	now     *time.Time
	tables  []pgstore.Table
}

const forgetOrigin = "lethe.test/forget-log"

// forgetTables creates two vector tables under a fresh schema: a
// LangChain.js-like one (uuid ids the database may generate, metadata
// jsonb) and a mem0/LlamaIndex-like one (bigserial id, user_id column and
// a participants array in a json column).
func forgetTables(t *testing.T, db testDB) (schema string, rules []extract.Rule, tables []pgstore.Table) {
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	var b [4]byte
	rand.Read(b[:])
	schema = "forget_" + hex.EncodeToString(b[:])
	_, err := direct.Exec(ctx, fmt.Sprintf(`CREATE SCHEMA %[1]s;
		CREATE TABLE %[1]s.chunks (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), content text, metadata jsonb, embedding vector(3));
		CREATE TABLE %[1]s.memories (id bigserial PRIMARY KEY, user_id text, extra json, embedding vector(3));`, schema))
	require.NoError(t, err)
	t.Cleanup(func() { direct.Exec(context.Background(), `DROP SCHEMA `+schema+` CASCADE`) })
	meta, _ := extract.ParseSubject("metadata->>'user_id'")
	uid, _ := extract.ParseSubject("user_id")
	parts, _ := extract.ParseSubject("extra->'participants'")
	rules = []extract.Rule{
		{Table: schema + ".chunks", ID: "id", Subjects: []extract.Subject{meta}},
		{Table: schema + ".memories", ID: "id", Subjects: []extract.Subject{uid, parts}},
	}
	tables = []pgstore.Table{
		{Schema: schema, Name: "chunks", ID: "id", Subjects: []pgstore.Subject{{Column: "metadata", Path: []string{"user_id"}}}},
		{Schema: schema, Name: "memories", ID: "id", Subjects: []pgstore.Subject{{Column: "user_id"}, {Column: "extra", Path: []string{"participants"}}}},
	}
	return schema, rules, tables
}

// ledgerBackend opens a fresh ledger and the storage of its log.
type ledgerBackend func(t *testing.T, db testDB) (engine.Ledger, translog.Storage)

func sqliteLedger(t *testing.T, _ testDB) (engine.Ledger, translog.Storage) {
	l, err := ledger.OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	return l, l.TransparencyLog()
}

// postgresLedger is a ledger in its own schema of the test cluster, as
// several proxies would share it.
func postgresLedger(t *testing.T, db testDB) (engine.Ledger, translog.Storage) {
	var b [4]byte
	rand.Read(b[:])
	schema := "lethe_ledger_forget_" + hex.EncodeToString(b[:])
	l, err := ledger.OpenPostgres(context.Background(), db.DSN(db.Addr(), "sslmode=disable"), ledger.Options{Schema: schema})
	require.NoError(t, err)
	t.Cleanup(func() {
		c := connect(t, db.URL(db.Addr(), ""))
		c.Exec(context.Background(), `DROP SCHEMA `+schema+` CASCADE`)
	})
	return l, l.TransparencyLog()
}

func startForgetRig(t *testing.T, db testDB, rules []extract.Rule, tables []pgstore.Table, open ledgerBackend) *forgetRig {
	t.Helper()
	ctx := ctxT(t)
	compiled, err := extract.NewRules(rules)
	require.NoError(t, err)
	l, storage := open(t, db)
	h, err := ledger.NewHasher(testSalt)
	require.NoError(t, err)
	tombs := capture.NewTombstones()
	require.NoError(t, tombs.Refresh(ctx, l))
	c := capture.New(capture.Config{Rules: compiled, Ledger: l, Hasher: h, Mode: capture.Strict, Tombstones: tombs, ConfirmHold: testConfirmHold})
	p := startProxy(t, db, func(s *pgwire.Server) { s.Observer = pgcapture.New(c, pgcapture.Config{}) })

	signer := testSigner(t)
	keys, err := certificate.NewKeySet(forgetOrigin, signer.TrustedKey(time.Unix(0, 0)))
	require.NoError(t, err)
	log, err := translog.New(storage, signer.NoteSigner(forgetOrigin), forgetOrigin)
	require.NoError(t, err)
	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	var layers []connector.Layer
	for _, tb := range tables {
		pl, err := pgstore.NewLayer(ctx, store, tb, true)
		require.NoError(t, err)
		layers = append(layers, pl)
	}
	now := time.Now()
	rig := &forgetRig{proxy: p, capture: c, ledger: l, hasher: h, keys: keys, now: &now, tables: tables}
	clock := func() time.Time { return *rig.now }
	e, err := engine.New(engine.Config{
		Ledger: l, Hasher: h, Layers: layers,
		Certifier: engine.NewCertifier(engine.CertifierConfig{
			Signer: signer, Keys: keys, Log: log, RulesSHA256: hex.EncodeToString(make([]byte, 32)), Tool: "lethe-proxy test", Now: clock,
		}),
		Tombstoned: tombs.Set, Now: clock, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil)),
	})
	require.NoError(t, err)
	rig.engine = e
	_, err = e.AnnounceKey(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { e.Close(); c.Close(); store.Close(); l.Close() })
	return rig
}

// testSigner is one operator key for the whole test run.
var testSignerKey *certificate.Signer

func testSigner(t *testing.T) *certificate.Signer {
	if testSignerKey == nil {
		s, err := certificate.GenerateKey(rand.Reader)
		require.NoError(t, err)
		testSignerKey = s
	}
	return testSignerKey
}

// writeForgetData writes rows for alice and bob through the proxy with
// several client shapes: pgx extended protocol with ids and with
// generated ids, simple-protocol inline literals, CopyFrom, and a
// conversation row about both.
func writeForgetData(t *testing.T, proxyURL, schema string) {
	ctx := ctxT(t)
	conn := connect(t, proxyURL)
	for _, who := range []string{"alice", "bob"} {
		_, err := conn.Exec(ctx, `INSERT INTO `+schema+`.chunks (id, content, metadata, embedding) VALUES (gen_random_uuid(), 'x', $1, '[1,2,3]'), ($2, 'y', $3, '[1,2,3]')`,
			fmt.Sprintf(`{"user_id": %q}`, who), newUUID(), fmt.Sprintf(`{"user_id": %q, "page": 2}`, who))
		require.NoError(t, err)
		_, err = conn.Exec(ctx, `INSERT INTO `+schema+`.chunks (content, metadata, embedding) VALUES ('generated', $1, '[1,2,3]')`,
			fmt.Sprintf(`{"user_id": %q}`, who))
		require.NoError(t, err)
		_, err = conn.Exec(ctx, `INSERT INTO `+schema+`.memories (user_id, extra, embedding) VALUES ('`+who+`', '{}', '[1,1,1]')`, pgx.QueryExecModeSimpleProtocol)
		require.NoError(t, err)
		_, err = conn.CopyFrom(ctx, pgx.Identifier{schema, "memories"}, []string{"user_id", "extra"},
			pgx.CopyFromRows([][]any{{who, map[string]any{"n": 1}}, {who, map[string]any{"n": 2}}}))
		require.NoError(t, err)
	}
	_, err := conn.Exec(ctx, `INSERT INTO `+schema+`.memories (user_id, extra, embedding) VALUES (NULL, '{"participants": ["alice", "carol"]}', '[4,4,4]')`)
	require.NoError(t, err)
}

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// countRows counts, directly on the server, the rows about who.
func subjectRows(t *testing.T, db testDB, schema, who string) (chunks, memories int) {
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	require.NoError(t, direct.QueryRow(ctx, `SELECT count(*) FROM `+schema+`.chunks WHERE metadata->>'user_id' = $1`, who).Scan(&chunks))
	require.NoError(t, direct.QueryRow(ctx, `SELECT count(*) FROM `+schema+`.memories WHERE user_id = $1 OR extra::jsonb->'participants' ? $1`, who).Scan(&memories))
	return
}

func (r *forgetRig) waitDone(t *testing.T, id string) engine.Status {
	t.Helper()
	for range 500 {
		st, err := r.engine.Status(context.Background(), id)
		require.NoError(t, err)
		if st.Status != ledger.ForgetReceived {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("forget %s did not finish", id)
	return engine.Status{}
}

// settle waits until the ledger has no pending intent (confirmations are
// asynchronous).
func (r *forgetRig) settle(t *testing.T) {
	for range 200 {
		p, err := r.ledger.Pending(context.Background())
		require.NoError(t, err)
		if len(p) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("intents stay pending")
}

// TestForget_EndToEnd writes for two subjects with several client shapes,
// previews and forgets one, and checks the rows are gone on the server,
// the certificate verifies with its inclusion proof, the other subject is
// untouched, and a new write about the forgotten subject is refused.
func TestForget_EndToEnd(t *testing.T) {
	for name, open := range map[string]ledgerBackend{"sqlite ledger": sqliteLedger, "postgres ledger": postgresLedger} {
		t.Run(name, func(t *testing.T) { testForgetEndToEnd(t, open) })
	}
}

func testForgetEndToEnd(t *testing.T, open ledgerBackend) {
	db := loadTestDB(t)
	schema, rules, tables := forgetTables(t, db)
	rig := startForgetRig(t, db, rules, tables, open)
	proxyURL := db.URL(rig.proxy.Addr, "sslmode=disable")
	writeForgetData(t, proxyURL, schema)
	rig.settle(t)
	ctx := ctxT(t)

	c, m := subjectRows(t, db, schema, "alice")
	require.Equal(t, [2]int{3, 4}, [2]int{c, m}, "alice's rows before")
	bobC, bobM := subjectRows(t, db, schema, "bob")

	pv, err := rig.engine.Preview(ctx, "alice")
	require.NoError(t, err)
	require.Len(t, pv.Layers, 2)
	require.Equal(t, 3, pv.Layers[0].Rows)
	require.Equal(t, 4, pv.Layers[1].Rows)
	require.NotZero(t, pv.Layers[0].LedgerRecords) // generated ids collapse into one (table, subject) record

	receipt, err := rig.engine.Forget(ctx, "alice", pv.Token)
	require.NoError(t, err)
	st := rig.waitDone(t, receipt.RequestID)
	require.Equal(t, ledger.ForgetCompleted, st.Status, "error: %s", st.Error)

	c, m = subjectRows(t, db, schema, "alice")
	require.Equal(t, [2]int{0, 0}, [2]int{c, m}, "alice's rows after, checked on the server")
	c, m = subjectRows(t, db, schema, "bob")
	require.Equal(t, [2]int{bobC, bobM}, [2]int{c, m}, "bob untouched")

	cert, err := rig.engine.Certificate(ctx, receipt.RequestID)
	require.NoError(t, err)
	res := certificate.Verify(cert, rig.keys, *rig.now)
	require.Equal(t, certificate.VerdictValid, res.Verdict, res.Reason)
	require.Equal(t, "valid", rig.engine.Verify(cert).Verdict)
	requireNodeVerdict(t, cert, rig.keys, *rig.now, "valid")
	p := res.Payload
	require.Equal(t, receipt.RequestID, p.RequestID)
	require.Equal(t, rig.hasher.Hash("alice").String(), p.Subject.HMAC)
	secret, err := hex.DecodeString(receipt.SubjectSecret)
	require.NoError(t, err)
	require.True(t, certificate.CheckCommitment("alice", secret, p.Subject.Commitment), "alice recognises her certificate")
	require.False(t, certificate.CheckCommitment("bob", secret, p.Subject.Commitment))
	require.Len(t, p.Scope, 2)
	require.EqualValues(t, 7, p.DeletedIDs.Count)
	for _, l := range p.Layers {
		require.True(t, l.VerifiedAbsent)
		require.Zero(t, l.Residual)
		require.NotEmpty(t, l.VerifyQueries)
	}

	// The log proves the certificate's inclusion independently.
	env, err := certificate.Parse(cert)
	require.NoError(t, err)
	cp, err := rig.engine.Checkpoint(ctx)
	require.NoError(t, err)
	incl, err := rig.engine.Inclusion(ctx, env.Log.Index, int64(countLines(cp)))
	require.NoError(t, err)
	require.Equal(t, env.Log.Leaf, incl.Record)

	// Keep the person gone: a new write about alice is refused, bob's passes.
	conn := connect(t, proxyURL)
	_, err = conn.Exec(ctx, `INSERT INTO `+schema+`.memories (user_id, embedding) VALUES ($1, '[1,1,1]')`, "alice")
	require.Equal(t, capture.CodeForgotten, pgCode(err), "err: %v", err)
	_, err = conn.Exec(ctx, `INSERT INTO `+schema+`.memories (user_id, embedding) VALUES ($1, '[1,1,1]')`, "bob")
	require.NoError(t, err)

	// A retry with the same token yields the same request, not a second certificate.
	_, err = rig.engine.Forget(ctx, "alice", pv.Token)
	var used *engine.UsedTokenError
	require.ErrorAs(t, err, &used)
	require.Equal(t, receipt.RequestID, used.RequestID)

	// Re-verification: absent, logged; the wrong subject is refused; a row
	// that reappears behind the proxy's back is reported.
	rv, err := rig.engine.Reverify(ctx, receipt.RequestID, "alice")
	require.NoError(t, err)
	require.True(t, rv.Absent)
	require.Len(t, rv.Layers, 2)
	_, err = rig.engine.Reverify(ctx, receipt.RequestID, "bob")
	require.ErrorIs(t, err, engine.ErrWrongSubject)
	direct := connect(t, db.URL(db.Addr(), ""))
	_, err = direct.Exec(ctx, `INSERT INTO `+schema+`.memories (user_id) VALUES ('alice')`)
	require.NoError(t, err)
	rv, err = rig.engine.Reverify(ctx, receipt.RequestID, "alice")
	require.NoError(t, err)
	require.False(t, rv.Absent)
	require.EqualValues(t, 1, rv.Layers[1].Residual)
	_, err = direct.Exec(ctx, `DELETE FROM `+schema+`.memories WHERE user_id = 'alice'`)
	require.NoError(t, err)

	// Lifting the tombstone lets alice back in.
	lifted, err := rig.engine.Lift(ctx, "alice")
	require.NoError(t, err)
	require.True(t, lifted)
	_, err = conn.Exec(ctx, `INSERT INTO `+schema+`.memories (user_id, embedding) VALUES ($1, '[1,1,1]')`, "alice")
	require.NoError(t, err)
}

func countLines(cp []byte) int64 {
	var origin string
	var size int64
	fmt.Sscanf(string(cp), "%s\n%d", &origin, &size)
	return size
}

// TestForget_TokensFailClosed: a token for another subject, an expired
// one, a stale one (the data changed after preview), a forged one.
func TestForget_TokensFailClosed(t *testing.T) {
	db := loadTestDB(t)
	schema, rules, tables := forgetTables(t, db)
	rig := startForgetRig(t, db, rules, tables, sqliteLedger)
	proxyURL := db.URL(rig.proxy.Addr, "sslmode=disable")
	writeForgetData(t, proxyURL, schema)
	rig.settle(t)
	ctx := ctxT(t)

	pv, err := rig.engine.Preview(ctx, "alice")
	require.NoError(t, err)
	_, err = rig.engine.Forget(ctx, "bob", pv.Token)
	require.ErrorIs(t, err, engine.ErrTokenSubject)
	_, err = rig.engine.Forget(ctx, "alice", pv.Token[:len(pv.Token)-2]+"AA")
	require.ErrorIs(t, err, engine.ErrTokenMalformed)

	later := rig.now.Add(11 * time.Minute)
	saved := *rig.now
	*rig.now = later
	_, err = rig.engine.Forget(ctx, "alice", pv.Token)
	require.ErrorIs(t, err, engine.ErrTokenExpired)
	*rig.now = saved

	conn := connect(t, proxyURL)
	_, err = conn.Exec(ctx, `INSERT INTO `+schema+`.memories (user_id, embedding) VALUES ($1, '[1,1,1]')`, "alice")
	require.NoError(t, err)
	rig.settle(t)
	_, err = rig.engine.Forget(ctx, "alice", pv.Token)
	require.ErrorIs(t, err, engine.ErrTokenStale)

	// Nothing was deleted by any refused attempt.
	c, m := subjectRows(t, db, schema, "alice")
	require.Equal(t, [2]int{3, 5}, [2]int{c, m})
}

// TestForget_SQLMetacharactersInSubjects forgets a subject that is an
// injection attempt; only its own rows go.
func TestForget_SQLMetacharactersInSubjects(t *testing.T) {
	db := loadTestDB(t)
	schema, rules, tables := forgetTables(t, db)
	rig := startForgetRig(t, db, rules, tables, sqliteLedger)
	proxyURL := db.URL(rig.proxy.Addr, "sslmode=disable")
	writeForgetData(t, proxyURL, schema)
	evil := `x' OR '1'='1'; DELETE FROM ` + schema + `.memories; --`
	conn := connect(t, proxyURL)
	ctx := ctxT(t)
	_, err := conn.Exec(ctx, `INSERT INTO `+schema+`.memories (user_id, embedding) VALUES ($1, '[1,1,1]')`, evil)
	require.NoError(t, err)
	rig.settle(t)
	before := map[string][2]int{}
	for _, who := range []string{"alice", "bob"} {
		c, m := subjectRows(t, db, schema, who)
		before[who] = [2]int{c, m}
	}
	pv, err := rig.engine.Preview(ctx, evil)
	require.NoError(t, err)
	r, err := rig.engine.Forget(ctx, evil, pv.Token)
	require.NoError(t, err)
	require.Equal(t, ledger.ForgetCompleted, rig.waitDone(t, r.RequestID).Status)
	for _, who := range []string{"alice", "bob"} {
		c, m := subjectRows(t, db, schema, who)
		require.Equal(t, before[who], [2]int{c, m}, who)
	}
	c, m := subjectRows(t, db, schema, evil)
	require.Equal(t, [2]int{0, 0}, [2]int{c, m})
}

// TestForget_ConcurrentSubjectsRunSafelyAndOneSubjectOnce forgets two
// subjects at once (both complete, each certificate verifies, each removes
// only its own rows) and the same subject twice at once with two tokens
// (one request; the other is refused as in progress, or as stale once the
// first has deleted).
func TestForget_ConcurrentSubjectsRunSafelyAndOneSubjectOnce(t *testing.T) {
	db := loadTestDB(t)
	schema, rules, tables := forgetTables(t, db)
	rig := startForgetRig(t, db, rules, tables, sqliteLedger)
	writeForgetData(t, db.URL(rig.proxy.Addr, "sslmode=disable"), schema)
	rig.settle(t)
	ctx := ctxT(t)

	subjects := []string{"alice", "bob", "alice"}
	tokens := make([]string, len(subjects))
	for i, who := range subjects {
		pv, err := rig.engine.Preview(ctx, who)
		require.NoError(t, err)
		tokens[i] = pv.Token
	}
	receipts := make([]engine.Receipt, len(subjects))
	errs := make([]error, len(subjects))
	var wg sync.WaitGroup
	for i, who := range subjects {
		wg.Add(1)
		go func() {
			defer wg.Done()
			receipts[i], errs[i] = rig.engine.Forget(ctx, who, tokens[i])
		}()
	}
	wg.Wait()
	require.NoError(t, errs[1], "bob")
	aliceOK := 0
	for _, i := range []int{0, 2} {
		if errs[i] == nil {
			aliceOK++
			continue
		}
		if !errors.Is(errs[i], engine.ErrInProgress) {
			require.ErrorIs(t, errs[i], engine.ErrTokenStale)
		}
	}
	require.Equal(t, 1, aliceOK, "one forget of alice")
	for i, r := range receipts {
		if errs[i] != nil {
			continue
		}
		require.Equal(t, ledger.ForgetCompleted, rig.waitDone(t, r.RequestID).Status)
		cert, err := rig.engine.Certificate(ctx, r.RequestID)
		require.NoError(t, err)
		res := certificate.Verify(cert, rig.keys, *rig.now)
		require.Equal(t, certificate.VerdictValid, res.Verdict, res.Reason)
		require.Equal(t, rig.hasher.Hash(subjects[i]).String(), res.Payload.Subject.HMAC)
	}
	for _, who := range []string{"alice", "bob"} {
		c, m := subjectRows(t, db, schema, who)
		require.Equal(t, [2]int{0, 0}, [2]int{c, m}, who)
	}
}

// requireNodeVerdict runs the independent Node verifier on a real
// certificate: it must give the Go verifier's verdict and exit status.
func requireNodeVerdict(t *testing.T, cert []byte, keys certificate.KeySet, now time.Time, want string) {
	t.Helper()
	node, err := exec.LookPath("node")
	require.NoError(t, err, "node is not installed: run scripts/setup.sh")
	keysJSON, err := keys.MarshalJSON()
	require.NoError(t, err)
	dir := t.TempDir()
	keysPath, certPath := filepath.Join(dir, "keys.json"), filepath.Join(dir, "cert.json")
	require.NoError(t, os.WriteFile(keysPath, keysJSON, 0o644))
	require.NoError(t, os.WriteFile(certPath, cert, 0o644))
	out, err := exec.Command(node, filepath.Join("..", "..", "certificate", "node", "verify.mjs"),
		keysPath, certPath, "--now", now.UTC().Format(time.RFC3339Nano)).CombinedOutput()
	if want == "valid" {
		require.NoError(t, err, "%s", out)
	}
	require.True(t, strings.HasPrefix(string(out), "verdict: "+want+"\n"), "node: %s", out)
}
