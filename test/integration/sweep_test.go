//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	gopinecone "github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

func (f *forgetBinary) sweep(t *testing.T, args ...string) commandRun {
	t.Helper()
	cmd := exec.Command(f.bin, append([]string{"sweep"}, args...)...)
	cmd.Env = f.env
	cmd.Dir = f.dir
	r := runCommand(t, cmd)
	t.Logf("sweep %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
	return r
}

// stop ends the proxy with SIGTERM and waits for it.
func (f *forgetBinary) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, f.cmd.Process.Signal(syscall.SIGTERM))
	f.cmd.Wait()
}

// ledgerCounts is `lethe-proxy ledger counts`: records per "table state".
func (f *forgetBinary) ledgerCounts(t *testing.T) map[string]string {
	t.Helper()
	out, err := f.cli(t, "", "ledger", "counts", "--config", f.cfg)
	require.NoError(t, err)
	counts := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		fs := strings.Fields(line)
		counts[fs[1]+" "+fs[2]] = fs[3]
	}
	return counts
}

// previewLedgerRecords is forget preview's ledger_records per table.
func (f *forgetBinary) previewLedgerRecords(t *testing.T, subject string) map[string]int {
	t.Helper()
	out, err := f.cli(t, subject+"\n", "forget", "preview")
	require.NoError(t, err)
	var pv struct {
		Layers []struct {
			Table         string `json:"table"`
			LedgerRecords int    `json:"ledger_records"`
		} `json:"layers"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &pv), out)
	got := map[string]int{}
	for _, l := range pv.Layers {
		got[l.Table] = l.LedgerRecords
	}
	return got
}

func tableIDs(t *testing.T, conn *pgx.Conn, query string) []string {
	t.Helper()
	rows, err := conn.Query(ctxT(t), query)
	require.NoError(t, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	slices.Sort(ids)
	return ids
}

// TestSweep_DeletesOnlyExpiredRows: rows written through the proxy with a
// timestamptz created_at (old, new, NULL) and a JSON created_at (old as
// ISO 8601 text and as epoch seconds, new, unreadable, missing). A dry run
// deletes nothing; the sweep, run while the proxy is stopped (so that only
// the sweep can mark the ledger), deletes exactly the expired rows, marks
// them deleted in the ledger (preview no longer counts them), and writes a
// signed report that verifies and whose event the log holds; a second
// sweep finds nothing. A row the server refuses to delete makes the sweep
// exit 1; no forget key, or a store it cannot reach, exit 2.
func TestSweep_DeletesOnlyExpiredRows(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "sw_docs", "id text PRIMARY KEY, user_id text, created_at timestamptz, embedding vector(3)")
	pgxTable(t, db, "sw_chunks", "id uuid PRIMARY KEY, cmetadata jsonb, embedding vector(3)")
	f := newForgetBinary(t, db, `    - {table: public.sw_docs, id: id, subjects: [user_id], retain: 90d, retain_by: created_at}
    - {table: public.sw_chunks, id: id, subjects: ["cmetadata->>'user_id'"], retain: 30d, retain_by: "cmetadata->>'created_at'"}`)
	f.start(t)
	ctx := ctxT(t)
	app := connect(t, db.URL(f.proxyAddr, "sslmode=disable"))
	now := time.Now().UTC()
	days := func(n int) time.Time { return now.Add(-time.Duration(n) * 24 * time.Hour) }
	for _, r := range []struct {
		id string
		at any
	}{{"d-old-1", days(100)}, {"d-old-2", days(91)}, {"d-old-3", days(400)}, {"d-new-1", days(1)}, {"d-new-2", days(89)}, {"d-null", nil}} {
		_, err := app.Exec(ctx, `INSERT INTO sw_docs (id, user_id, created_at, embedding) VALUES ($1, 'alice', $2, '[1,2,3]')`, r.id, r.at)
		require.NoError(t, err)
	}
	for _, md := range []string{
		fmt.Sprintf(`{"tag": "c-old-iso", "user_id": "alice", "created_at": %q}`, days(200).Format(time.RFC3339)),
		fmt.Sprintf(`{"tag": "c-old-epoch", "user_id": "alice", "created_at": %d}`, days(31).Unix()),
		fmt.Sprintf(`{"tag": "c-old-date", "user_id": "alice", "created_at": %q}`, days(60).Format("2006-01-02")),
		fmt.Sprintf(`{"tag": "c-new", "user_id": "alice", "created_at": %q}`, days(2).Format("2006-01-02 15:04:05")),
		`{"tag": "c-bad", "user_id": "alice", "created_at": "last tuesday"}`,
		`{"tag": "c-feb-30", "user_id": "alice", "created_at": "2020-02-30"}`,
		`{"tag": "c-missing", "user_id": "alice"}`,
	} {
		_, err := app.Exec(ctx, `INSERT INTO sw_chunks (id, cmetadata, embedding) VALUES ($1, $2, '[1,2,3]')`, newUUID(), md)
		require.NoError(t, err)
	}
	require.Equal(t, map[string]int{"public.sw_docs": 6, "public.sw_chunks": 7}, f.previewLedgerRecords(t, "alice"))
	direct := connect(t, db.URL(db.Addr(), ""))
	const docIDs, chunkTags = "SELECT id FROM sw_docs", "SELECT cmetadata->>'tag' FROM sw_chunks"
	allDocs, allChunks := tableIDs(t, direct, docIDs), tableIDs(t, direct, chunkTags)

	dry := f.sweep(t, "--config", f.cfg, "--dry-run")
	require.Equal(t, 0, dry.code)
	assert.Regexp(t, `postgres\s+public.sw_docs\s+\S+\s+3\s+0\s+0\s+1\s+counted`, dry.stdout)
	assert.Regexp(t, `postgres\s+public.sw_chunks\s+\S+\s+3\s+0\s+0\s+3\s+counted`, dry.stdout)
	assert.Equal(t, allDocs, tableIDs(t, direct, docIDs), "a dry run deletes nothing")
	assert.Equal(t, allChunks, tableIDs(t, direct, chunkTags))

	f.stop(t)
	reportFile := filepath.Join(f.dir, "report.json")
	run := f.sweep(t, "--config", f.cfg, "--batch", "2", "--report", reportFile)
	require.Equal(t, 0, run.code)
	assert.Equal(t, []string{"d-new-1", "d-new-2", "d-null"}, tableIDs(t, direct, docIDs))
	assert.Equal(t, []string{"c-bad", "c-feb-30", "c-missing", "c-new"}, tableIDs(t, direct, chunkTags))
	assert.Regexp(t, `postgres\s+public.sw_docs\s+\S+\s+3\s+3\s+0\s+1\s+ok`, run.stdout)
	assert.Regexp(t, `report .*report.json: signed, transparency log index \d+`, run.stdout)
	assert.Contains(t, run.stderr, "public.sw_chunks: 3 records have no readable retain_by")
	counts := f.ledgerCounts(t)
	assert.Equal(t, "3", counts["public.sw_docs deleted"], "the sweep itself marks the rows deleted: %v", counts)
	assert.Equal(t, "3", counts["public.sw_chunks deleted"], "%v", counts)

	r, err := certificate.VerifyReport([]byte(mustRead(t, reportFile)), mustKeys(t, filepath.Join(f.dir, "keys.json")))
	require.NoError(t, err, "the report is signed by a trusted key and a signed checkpoint covers its event")
	assert.Equal(t, certificate.EventRetentionSwept, r.Kind)
	require.Len(t, r.Layers, 2)
	docs := r.Layers[0]
	assert.Equal(t, certificate.ReportLayer{Store: "postgres", Table: "public.sw_docs", Found: 3, Done: 3, Residual: 0, Method: docs.Method, Cutoff: docs.Cutoff}, docs)
	assert.WithinDuration(t, now.Add(-90*24*time.Hour), *docs.Cutoff, 10*time.Minute)
	assert.Contains(t, docs.Method, `SELECT count(*) FROM "public"."sw_docs" WHERE "created_at" < $1`)
	assert.Contains(t, r.Layers[1].Method, "3 records whose cmetadata->>'created_at' is missing or not a time were kept")
	var sr certificate.SignedReport
	require.NoError(t, json.Unmarshal([]byte(mustRead(t, reportFile)), &sr))
	assert.Contains(t, string(sr.Log.Leaf), `"event":"retention.swept"`)

	f.start(t)
	assert.Equal(t, map[string]int{"public.sw_docs": 3, "public.sw_chunks": 4}, f.previewLedgerRecords(t, "alice"),
		"preview no longer counts the swept records")
	again := f.sweep(t, "--config", f.cfg)
	require.Equal(t, 0, again.code)
	assert.Regexp(t, `public.sw_docs\s+\S+\s+0\s+0\s+0\s+1\s+ok`, again.stdout, "a second sweep finds nothing")
	assert.FileExists(t, filepath.Join(f.dir, strings.Fields(again.stdout)[1]+".json"), "the default report file is named after the run")

	// A row the server will not delete (a trigger skips it) is left: exit 1.
	_, err = direct.Exec(ctx, `CREATE FUNCTION sw_keep() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
		IF OLD.id = 'd-stuck' THEN RETURN NULL; END IF; RETURN OLD; END $$;
		CREATE TRIGGER sw_keep BEFORE DELETE ON sw_docs FOR EACH ROW EXECUTE FUNCTION sw_keep();
		INSERT INTO sw_docs (id, user_id, created_at) VALUES ('d-stuck', 'alice', now() - interval '100 days')`)
	require.NoError(t, err)
	t.Cleanup(func() { connect(t, db.URL(db.Addr(), "")).Exec(ctxT(t), "DROP FUNCTION IF EXISTS sw_keep() CASCADE") })
	stuck := f.sweep(t, "--config", f.cfg)
	assert.Equal(t, 1, stuck.code)
	assert.Regexp(t, `public.sw_docs\s+\S+\s+1\s+0\s+1\s+1\s+left`, stuck.stdout)

	// Without forget.signing_key there is nothing to sign with: exit 2.
	cfgText := mustRead(t, f.cfg)
	i, j := strings.Index(cfgText, "forget:\n"), strings.Index(cfgText, "log: ")
	noForget := filepath.Join(f.dir, "noforget.yaml")
	require.NoError(t, os.WriteFile(noForget, []byte(cfgText[:i]+cfgText[j:]), 0o600))
	unsigned := f.sweep(t, "--config", noForget)
	assert.Equal(t, 2, unsigned.code)
	assert.Contains(t, unsigned.stderr, "forget.signing_key")
	assert.Equal(t, 0, f.sweep(t, "--config", noForget, "--dry-run").code, "a dry run signs nothing")

	// A store it cannot reach: exit 2.
	unreachable := filepath.Join(f.dir, "unreachable.yaml")
	require.NoError(t, os.WriteFile(unreachable, []byte(strings.Replace(cfgText, "port="+db.Port, "port="+portOf(t, freePort(t)), 1)), 0o600))
	down := f.sweep(t, "--config", unreachable, "--dry-run")
	assert.Equal(t, 2, down.code)
	assert.Contains(t, down.stderr, "capture.store")
}

func portOf(t *testing.T, addr string) string {
	i := strings.LastIndex(addr, ":")
	require.Positive(t, i, addr)
	return addr[i+1:]
}

// TestSweep_PineconeNamespaceThroughTheBinary: records upserted through
// the proxy's Pinecone relay, more than one list page, some with an epoch
// created_at past the namespace rule's retain; lethe-proxy sweep deletes
// exactly those from the index, the ledger marks them deleted, and the
// report verifies.
func TestSweep_PineconeNamespaceThroughTheBinary(t *testing.T) {
	f, proxied, direct := startPineconeSweep(t, "sw_pc_docs", emulator.Config{APIKey: "sweep-key", DeleteDelay: 300 * time.Millisecond})
	old, fresh := time.Now().Add(-8*24*time.Hour).Unix(), time.Now().Add(-6*24*time.Hour).Unix()
	var vectors []*gopinecone.Vector
	var wantKept []string
	for i := range 180 {
		id := fmt.Sprintf("n%03d", i)
		fields := map[string]any{"user_id": "alice", "created_at": fresh}
		if i%3 == 0 {
			fields["created_at"] = old
		} else {
			wantKept = append(wantKept, id)
		}
		md, err := structpb.NewStruct(fields)
		require.NoError(t, err)
		values := []float32{1, float32(i), 0.5}
		vectors = append(vectors, &gopinecone.Vector{Id: id, Values: &values, Metadata: md})
	}
	_, err := proxied.UpsertVectors(ctxT(t), vectors)
	require.NoError(t, err)
	// The sweep runs while the proxy is stopped, which confirms every
	// write at the latest: only the sweep can mark the ledger then.
	f.stop(t)
	require.Equal(t, map[string]string{"docs/notes confirmed": "180"}, f.ledgerCounts(t))

	reportFile := filepath.Join(f.dir, "pc-report.json")
	run := f.sweep(t, "--config", f.cfg, "--batch", "25", "--report", reportFile)
	require.Equal(t, 0, run.code)
	assert.Regexp(t, `pinecone\s+docs/notes\s+\S+\s+60\s+60\s+0\s+0\s+ok`, run.stdout)
	var kept []string
	var token *string
	for {
		page, err := direct.ListVectors(ctxT(t), &gopinecone.ListVectorsRequest{PaginationToken: token})
		require.NoError(t, err)
		for _, id := range page.VectorIds {
			kept = append(kept, *id)
		}
		if page.NextPaginationToken == nil || *page.NextPaginationToken == "" {
			break
		}
		token = page.NextPaginationToken
	}
	slices.Sort(kept)
	assert.Equal(t, wantKept, kept)
	assert.Equal(t, map[string]string{"docs/notes confirmed": "120", "docs/notes deleted": "60"}, f.ledgerCounts(t))
	f.start(t)
	assert.Equal(t, 120, f.previewLedgerRecords(t, "alice")["docs/notes"], "preview no longer counts the swept records")
	r, err := certificate.VerifyReport([]byte(mustRead(t, reportFile)), mustKeys(t, filepath.Join(f.dir, "keys.json")))
	require.NoError(t, err)
	require.Len(t, r.Layers, 1)
	assert.Equal(t, int64(60), r.Layers[0].Done)
}

// TestSweep_PineconeRecordsWrittenJustBeforeStayDeleted: a running proxy
// holds its confirmations for a while (capture's ConfirmHold), so records
// upserted a moment before a sweep are still pending in the ledger when
// the sweep deletes them; once the proxy has confirmed them, the ledger
// must still say the swept ones are deleted.
func TestSweep_PineconeRecordsWrittenJustBeforeStayDeleted(t *testing.T) {
	f, proxied, _ := startPineconeSweep(t, "sw_pc_held_docs", emulator.Config{APIKey: "sweep-key"})
	old, fresh := time.Now().Add(-8*24*time.Hour).Unix(), time.Now().Add(-6*24*time.Hour).Unix()
	var vectors []*gopinecone.Vector
	for i := range 6 {
		at := fresh
		if i%2 == 0 {
			at = old
		}
		md, err := structpb.NewStruct(map[string]any{"user_id": "alice", "created_at": at})
		require.NoError(t, err)
		values := []float32{1, float32(i), 0.5}
		vectors = append(vectors, &gopinecone.Vector{Id: fmt.Sprintf("h%d", i), Values: &values, Metadata: md})
	}
	_, err := proxied.UpsertVectors(ctxT(t), vectors)
	require.NoError(t, err)

	// At once, while the proxy still holds the upsert's confirmation.
	run := f.sweep(t, "--config", f.cfg, "--report", filepath.Join(f.dir, "held-report.json"))
	require.Equal(t, 0, run.code)
	assert.Regexp(t, `pinecone\s+docs/notes\s+\S+\s+3\s+3\s+0\s+0\s+ok`, run.stdout)
	f.stop(t)
	assert.Equal(t, map[string]string{"docs/notes confirmed": "3", "docs/notes deleted": "3"}, f.ledgerCounts(t))
}

// startPineconeSweep runs the proxy binary with a rule for the PostgreSQL
// table (created here) and a Pinecone index on an emulator made with cfg,
// whose namespace notes keeps records 7 days by their epoch created_at. It
// returns the proxy and SDK connections to notes through it and
// straight to the emulator.
func startPineconeSweep(t *testing.T, table string, cfg emulator.Config) (f *forgetBinary, proxied, direct *gopinecone.IndexConnection) {
	t.Helper()
	db := loadTestDB(t)
	pgxTable(t, db, table, "id text PRIMARY KEY, user_id text, embedding vector(3)")
	_, upstream := startEmulator(t, cfg)
	pcAddr := freePort(t)
	rule := fmt.Sprintf("    - {table: public.%s, id: id, subjects: [user_id]}", table)
	f = newForgetBinary(t, db, rule, fmt.Sprintf(`pinecone:
  listen: %s
  indexes:
    - name: docs
      host: %s
      namespaces: [{namespace: notes, subjects: [user_id], retain: 7d, retain_by: created_at}]
`, pcAddr, upstream))
	f.env = append(f.env, "LETHE_PINECONE_API_KEY=sweep-key")
	f.start(t)

	pc, err := gopinecone.NewClient(gopinecone.NewClientParams{ApiKey: "sweep-key"})
	require.NoError(t, err)
	proxied, err = pc.Index(gopinecone.NewIndexConnParams{Host: "http://" + pcAddr, Namespace: "notes"})
	require.NoError(t, err)
	t.Cleanup(func() { proxied.Close() })
	direct, err = pc.Index(gopinecone.NewIndexConnParams{Host: upstream, Namespace: "notes"})
	require.NoError(t, err)
	t.Cleanup(func() { direct.Close() })
	return f, proxied, direct
}
