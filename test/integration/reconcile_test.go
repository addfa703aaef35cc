//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	gopinecone "github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/proxy/pgwire/walfollow"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// reconcileRun is one run of lethe-proxy reconcile.
type reconcileRun struct {
	commandRun
	out struct {
		Tables []struct {
			Store      string `json:"store"`
			Table      string `json:"table"`
			Absent     bool   `json:"absent"`
			Scanned    int64  `json:"scanned"`
			Known      int64  `json:"known"`
			Unknown    int64  `json:"unknown"`
			Unreadable int64  `json:"unreadable"`
			Forgotten  int64  `json:"forgotten"`
			Adopted    int64  `json:"adopted"`
		} `json:"tables"`
		Unknown     int64    `json:"unknown"`
		Adopted     int64    `json:"adopted"`
		Forgotten   int64    `json:"forgotten"`
		ForgottenBy []string `json:"forgotten_by"`
		RunID       string   `json:"run_id"`
		Report      string   `json:"report"`
	}
}

// reconcile runs lethe-proxy reconcile with args in f's directory and
// returns what it printed and its exit status; with --format json the
// output is parsed.
func (f *forgetBinary) reconcile(t *testing.T, args ...string) reconcileRun {
	t.Helper()
	cmd := exec.Command(f.bin, append([]string{"reconcile", "--config", f.cfg}, args...)...)
	cmd.Env, cmd.Dir = f.env, f.dir
	r := reconcileRun{commandRun: runCommand(t, cmd)}
	t.Logf("reconcile %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	if strings.Contains(strings.Join(args, " "), "--format json") && r.code != 2 {
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &r.out), r.stdout)
	}
	return r
}

// counts is a run's counts of table: scanned, known, unknown, unreadable,
// adopted.
func (r reconcileRun) counts(t *testing.T, table string) [5]int64 {
	t.Helper()
	for _, c := range r.out.Tables {
		if c.Table == table {
			return [5]int64{c.Scanned, c.Known, c.Unknown, c.Unreadable, c.Adopted}
		}
	}
	t.Fatalf("reconcile printed no counts for %s: %s", table, r.stdout)
	return [5]int64{}
}

// stopProxy kills the proxy and drops its WAL slot: what follows is
// written while no follower reads the WAL.
func (f *forgetBinary) stopProxyAndFollower(t *testing.T, db testDB) {
	t.Helper()
	f.cmd.Process.Kill()
	f.cmd.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, db.URL(db.Addr(), ""))
	require.NoError(t, err)
	defer conn.Close(ctx)
	for err = walfollow.Drop(ctx, conn, f.slot); err != nil && ctx.Err() == nil; err = walfollow.Drop(ctx, conn, f.slot) {
		time.Sleep(100 * time.Millisecond) // the killed follower's session may hold the slot a moment
	}
	require.NoError(t, err)
}

// Rows inserted straight into the server while the proxy ran without the
// WAL follower (capture.wal: off), and a row updated to another subject
// then, are found by reconcile (exit 1, counts only), adopted with a
// signed and logged report, known to a second run (exit 0), and then
// deleted and counted by a forget as records the ledger holds. (With the
// follower on, rows already there when its slot is made are recorded at
// that start: TestServe_TwoDatabasesOnOneServerEachGetTheirOwnSlot.)
func TestReconcile_RowsWrittenWithoutTheFollowerAreFoundAdoptedAndForgotten(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "rc_docs", "id text PRIMARY KEY, user_id text, embedding vector(3)")
	pgxTable(t, db, "rc_notes", "id bigserial PRIMARY KEY, meta jsonb, embedding vector(3)")
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := longCtx(t)
	_, err := direct.Exec(ctx, `DROP TABLE IF EXISTS rc_later`)
	require.NoError(t, err)

	f := newForgetBinary(t, db, `    - {table: public.rc_docs, id: id, subjects: [user_id]}
    - {table: public.rc_notes, id: id, subjects: ["meta->>'who'"]}
    - {table: public.rc_later, id: id, subjects: [user_id]}`)
	f.start(t)
	app := connect(t, db.URL(f.proxyAddr, "sslmode=disable"))
	for _, row := range [][2]string{{"rid-0005", "bob@example.com"}, {"rid-0006", "mallory@example.com"}} {
		_, err = app.Exec(ctx, `INSERT INTO rc_docs (id, user_id, embedding) VALUES ($1, $2, '[1,2,3]')`, row[0], row[1])
		require.NoError(t, err)
	}
	awaitFollowed(t, db, f.slot)
	app.Close(ctx)
	// Without the follower, rows are written around the proxy and
	// rid-0006 moves to erin: the ledger still has it under mallory.
	f.stopProxyAndFollower(t, db)
	cfg := mustRead(t, f.cfg)
	require.NoError(t, os.WriteFile(f.cfg, []byte(strings.Replace(cfg, "  wal_slot: ", "  wal: off\n  wal_slot: ", 1)), 0o600))
	f.start(t)
	_, err = direct.Exec(ctx, `INSERT INTO rc_docs VALUES
		('rid-0001', 'alice@example.com', '[1,2,3]'), ('rid-0002', 'alice@example.com', '[1,2,3]'),
		('rid-0003', 'bob@example.com', '[1,2,3]'), ('rid-0004', NULL, '[1,2,3]')`)
	require.NoError(t, err)
	_, err = direct.Exec(ctx, `INSERT INTO rc_notes (meta, embedding) VALUES
		('{"who": "alice@example.com"}', '[1,2,3]'), ('{"who": "carol@example.com"}', '[1,2,3]')`)
	require.NoError(t, err)
	_, err = direct.Exec(ctx, `UPDATE rc_docs SET user_id = 'erin@example.com' WHERE id = 'rid-0006'`)
	require.NoError(t, err)

	personal := []string{"alice", "bob", "carol", "erin", "mallory", "example.com", "rid-"}
	noPersonalData := func(r reconcileRun) {
		t.Helper()
		for _, s := range personal {
			assert.NotContains(t, r.stdout+r.stderr, s, "reconcile prints counts only")
		}
	}

	text := f.reconcile(t)
	assert.Equal(t, 1, text.code, "unknown records were found")
	noPersonalData(text)
	assert.Contains(t, text.stdout, "6 records name a subject the ledger does not know")
	assert.Contains(t, text.stdout, "public.rc_later does not exist (yet): it holds nothing")
	found := f.reconcile(t, "--format", "json")
	assert.Equal(t, 1, found.code)
	noPersonalData(found)
	// scanned, known, unknown, unreadable, adopted
	assert.Equal(t, [5]int64{6, 1, 4, 1, 0}, found.counts(t, "public.rc_docs"), "rid-0005 is known; rid-0006 is known under another subject only; rid-0004 names nobody")
	assert.Equal(t, [5]int64{2, 0, 2, 0, 0}, found.counts(t, "public.rc_notes"))
	assert.Equal(t, [5]int64{}, found.counts(t, "public.rc_later"))
	assert.EqualValues(t, 6, found.out.Unknown)

	reportFile := filepath.Join(f.dir, "adopted.json")
	adopted := f.reconcile(t, "--adopt", "--report", reportFile)
	require.Equal(t, 0, adopted.code, "after a successful adoption")
	noPersonalData(adopted)
	assert.Contains(t, adopted.stdout, "adopted 6 records into the ledger; signed report (run reconcile-")
	assert.Contains(t, adopted.stdout, "written to "+reportFile)
	assert.Regexp(t, `public\.rc_docs\s+6\s+1\s+4\s+1\s+0\s+4\n`, adopted.stdout)
	signed := []byte(mustRead(t, reportFile))
	for _, s := range personal {
		assert.NotContains(t, string(signed), s)
	}
	report, err := certificate.VerifyReport(signed, mustKeys(t, filepath.Join(f.dir, "keys.json")))
	require.NoError(t, err)
	assert.Equal(t, certificate.EventReconcileAdopted, report.Kind)
	assert.Contains(t, adopted.stdout, "(run "+report.RunID+")")
	layers := map[string][2]int64{}
	for _, l := range report.Layers {
		layers[l.Table] = [2]int64{l.Found, l.Done}
		assert.NotEmpty(t, l.Method)
	}
	assert.Equal(t, map[string][2]int64{"public.rc_docs": {4, 4}, "public.rc_notes": {2, 2}, "public.rc_later": {0, 0}}, layers)
	var sr certificate.SignedReport
	require.NoError(t, json.Unmarshal(signed, &sr))
	require.NotNil(t, sr.Log, "the report carries its inclusion proof")
	event, err := certificate.ParseEvent(sr.Log.Leaf)
	require.NoError(t, err)
	assert.Equal(t, certificate.EventReconcileAdopted, event.Event)
	checkpoint, err := f.cli(t, "", "log", "checkpoint")
	require.NoError(t, err)
	assert.GreaterOrEqual(t, checkpointSize(t, checkpoint), sr.Log.Index+1, "the proxy's log holds the event")

	again := f.reconcile(t, "--adopt", "--format", "json")
	assert.Equal(t, 0, again.code)
	assert.Zero(t, again.out.Adopted, "adopting twice adopts nothing the second time")
	assert.Empty(t, again.out.Report, "and signs no report")
	assert.Equal(t, [5]int64{6, 5, 0, 1, 0}, again.counts(t, "public.rc_docs"))
	assert.Equal(t, 0, f.reconcile(t).code)

	preview, payload := f.forgetViaCLI(t, "alice@example.com")
	assert.EqualValues(t, 2, preview["public.rc_docs"]["ledger_records"], "the ledger knows the adopted rows")
	docs := certLayer(t, payload, "public.rc_docs")
	assert.EqualValues(t, 2, docs.Requested, "the certificate counts the adopted rows as the ledger's")
	assert.EqualValues(t, 2, docs.Deleted)
	notes := certLayer(t, payload, "public.rc_notes")
	assert.EqualValues(t, 1, notes.Requested)
	assert.EqualValues(t, 1, notes.Deleted)
	var left int
	require.NoError(t, direct.QueryRow(ctx, `SELECT count(*) FROM rc_docs WHERE user_id = 'alice@example.com'`).Scan(&left))
	assert.Zero(t, left)
	require.NoError(t, direct.QueryRow(ctx, `SELECT count(*) FROM rc_docs`).Scan(&left))
	assert.Equal(t, 4, left, "everyone else's rows stay")

	// A row about alice written around the proxy while no follower ran,
	// after her forget: found, never adopted, exit 1 naming the request;
	// forgetting her again deletes it.
	f.stopProxyAndFollower(t, db)
	_, err = direct.Exec(ctx, `INSERT INTO rc_docs VALUES ('rid-0009', 'alice@example.com', '[1,2,3]')`)
	require.NoError(t, err)
	late := f.reconcile(t, "--adopt", "--format", "json")
	assert.Equal(t, 1, late.code)
	noPersonalData(late)
	assert.EqualValues(t, 1, late.out.Forgotten)
	assert.Equal(t, []string{payload.RequestID}, late.out.ForgottenBy)
	assert.Zero(t, late.out.Adopted)
	lateText := f.reconcile(t)
	assert.Equal(t, 1, lateText.code)
	assert.Contains(t, lateText.stdout, "1 records name a subject already forgotten")
	assert.Contains(t, lateText.stdout, "request "+payload.RequestID)
	f.start(t)
	_, reforgotten := f.forgetViaCLI(t, "alice@example.com")
	assert.EqualValues(t, 1, certLayer(t, reforgotten, "public.rc_docs").Deleted)
	assert.Equal(t, 0, f.reconcile(t).code, "nothing forgotten is left")
}

// longCtx bounds a whole reconcile test: it builds and starts the proxy
// (twice in one of them) and runs the CLI several times, which takes
// longer than ctxT allows on a slow, shared machine.
func longCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// checkpointSize reads the tree size of a signed checkpoint (its second
// line).
func checkpointSize(t *testing.T, note string) int64 {
	t.Helper()
	lines := strings.Split(note, "\n")
	require.GreaterOrEqual(t, len(lines), 2, note)
	var n int64
	_, err := fmt.Sscan(lines[1], &n)
	require.NoError(t, err, note)
	return n
}

// --adopt without forget configured says what is missing and exits 2;
// a config without rules or with an unreachable store exits 2.
func TestReconcile_ExitTwoWhenItCannotRun(t *testing.T) {
	db := loadTestDB(t)
	f := newForgetBinary(t, db, `    - {table: public.rc_none, id: id, subjects: [user_id]}`)
	cfg := mustRead(t, f.cfg)
	noForget := strings.Replace(cfg, "  signing_key: signing.pem\n", "", 1)
	require.NoError(t, os.WriteFile(f.cfg, []byte(noForget), 0o600))
	r := f.reconcile(t, "--adopt")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "forget.signing_key")

	unreachable := strings.Replace(cfg, fmt.Sprintf("port=%s ", db.Port), fmt.Sprintf("port=%s ", strings.Split(freePort(t), ":")[1]), 1)
	require.NotEqual(t, cfg, unreachable)
	require.NoError(t, os.WriteFile(f.cfg, []byte(unreachable), 0o600))
	r = f.reconcile(t)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "capture.store")
}

// Records upserted straight to the index, around the proxy, are found in
// a namespace with its own rule and in the namespaces of a "*" rule, page
// after page, adopted, and known to the next run.
func TestReconcile_PineconeRecordsUpsertedAroundTheProxy(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "rc_pc_docs", "id text PRIMARY KEY, user_id text, embedding vector(3)")
	_, upstream := startEmulator(t, emulator.Config{APIKey: "reconcile-key"})
	pcAddr := freePort(t)
	f := newForgetBinary(t, db, `    - {table: public.rc_pc_docs, id: id, subjects: [user_id]}`, fmt.Sprintf(`pinecone:
  listen: %s
  indexes:
    - name: docs
      host: %s
      namespaces: [{namespace: notes, subjects: [user_id]}, {namespace: "*", subjects: [owner]}]
`, pcAddr, upstream))
	f.env = append(f.env, "LETHE_PINECONE_API_KEY=reconcile-key")
	f.start(t)
	ctx := longCtx(t)
	vec := func(id, field, who string) *gopinecone.Vector {
		md, err := structpb.NewStruct(map[string]any{field: who})
		require.NoError(t, err)
		values := []float32{1, 0.5, 0.25}
		return &gopinecone.Vector{Id: id, Values: &values, Metadata: md}
	}
	index := func(host, ns string) *gopinecone.IndexConnection {
		pc, err := gopinecone.NewClient(gopinecone.NewClientParams{ApiKey: "reconcile-key"})
		require.NoError(t, err)
		idx, err := pc.Index(gopinecone.NewIndexConnParams{Host: host, Namespace: ns})
		require.NoError(t, err)
		t.Cleanup(func() { idx.Close() })
		return idx
	}
	_, err := index("http://"+pcAddr, "notes").UpsertVectors(ctx, []*gopinecone.Vector{vec("rid-p1", "user_id", "alice@example.com"), vec("rid-p2", "user_id", "bob@example.com")})
	require.NoError(t, err)
	var around []*gopinecone.Vector
	for i := range 250 { // more than two list pages
		around = append(around, vec(fmt.Sprintf("rid-n%03d", i), "user_id", fmt.Sprintf("user%d@example.com", i%7)))
	}
	_, err = index(upstream, "notes").UpsertVectors(ctx, around)
	require.NoError(t, err)
	_, err = index(upstream, "other").UpsertVectors(ctx, []*gopinecone.Vector{
		vec("rid-o1", "owner", "carol@example.com"), vec("rid-o2", "owner", "carol@example.com"), vec("rid-o3", "user_id", "nobody-by-this-rule"),
	})
	require.NoError(t, err)

	// The proxy confirms its intents in the background.
	require.Eventually(t, func() bool {
		counts, err := f.cli(t, "", "ledger", "counts", "--config", f.cfg)
		return err == nil && regexp.MustCompile(`docs/notes\s+confirmed\s+2\n`).MatchString(counts)
	}, 60*time.Second, 100*time.Millisecond, "the proxied upserts are confirmed")
	found := f.reconcile(t, "--format", "json")
	assert.Equal(t, 1, found.code)
	for _, s := range []string{"alice", "carol", "example.com", "rid-"} {
		assert.NotContains(t, found.stdout+found.stderr, s)
	}
	assert.Equal(t, [5]int64{252, 2, 250, 0, 0}, found.counts(t, "docs/notes"))
	assert.Equal(t, [5]int64{3, 0, 2, 1, 0}, found.counts(t, "docs/other"), "rid-o3 names nobody under the * rule's field")
	assert.Equal(t, [5]int64{}, found.counts(t, "public.rc_pc_docs"))

	adopted := f.reconcile(t, "--adopt", "--format", "json")
	require.Equal(t, 0, adopted.code)
	assert.EqualValues(t, 252, adopted.out.Adopted)
	report, err := certificate.VerifyReport([]byte(mustRead(t, adopted.out.Report)), mustKeys(t, filepath.Join(f.dir, "keys.json")))
	require.NoError(t, err)
	assert.Len(t, report.Layers, 3)
	assert.Equal(t, filepath.Join(f.dir, adopted.out.RunID+".json"), adopted.out.Report, "the default report file, in the current directory")

	again := f.reconcile(t, "--format", "json")
	assert.Equal(t, 0, again.code)
	assert.Equal(t, [5]int64{252, 252, 0, 0, 0}, again.counts(t, "docs/notes"))
	assert.Equal(t, [5]int64{3, 2, 0, 1, 0}, again.counts(t, "docs/other"))
}
