//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

// TestForget_DocumentIndexAndPostgres: one proxy captures a PostgreSQL
// table and a Pinecone document index (api: documents, API version
// 2026-07). The Node SDK 9.x writes alice's and bob's documents through
// the proxy, one of alice's straight to the index (before Lethe), and
// pgx their rows. One forget of alice gives one certificate covering
// both stores: her rows and her three documents deleted (the one the
// ledger never saw found by a fetch filtered on user_id), the document
// deletes verified once visible (the index shows them 800 ms late); bob's
// rows and documents stay, and alice's next document write is refused.
func TestForget_DocumentIndexAndPostgres(t *testing.T) {
	node, dir := sdktest.Node(t, "@pinecone-database/pinecone9")
	db := loadTestDB(t)
	pgxTable(t, db, "docs2_rows", "id text PRIMARY KEY, user_id text, embedding vector(3)")
	_, upstream := startEmulator(t, emulator.Config{APIKey: "docs2-key", DeleteDelay: 800 * time.Millisecond})
	pcAddr := freePort(t)
	f := newForgetBinary(t, db, `    - {table: public.docs2_rows, id: id, subjects: [user_id]}`, fmt.Sprintf(`pinecone:
  listen: %s
  indexes:
    - name: docs2-notes
      host: %s
      api: documents
      namespaces: [{namespace: notes, subjects: [user_id]}]
`, pcAddr, upstream))
	f.env = append(f.env, "LETHE_PINECONE_API_KEY=docs2-key")
	f.start(t)

	step := func(name, host string) map[string]any {
		t.Helper()
		out := sdktest.RunNode(t, node, dir, append(os.Environ(), "LETHE_DOCS_STEP="+name), "pinecone9-forget-documents.mjs", host, "docs2-key")
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &got), out)
		return got
	}
	proxied := "http://" + pcAddr
	assert.EqualValues(t, 3, step("write", proxied)["upserted"])
	assert.EqualValues(t, 1, step("before-lethe", upstream)["upserted"])

	ctx := ctxT(t)
	app := connect(t, db.URL(f.proxyAddr, "sslmode=disable"))
	for _, row := range [][2]string{{"r1", "alice"}, {"r2", "alice"}, {"r3", "bob"}} {
		_, err := app.Exec(ctx, `INSERT INTO docs2_rows (id, user_id, embedding) VALUES ($1, $2, '[1,2,3]')`, row[0], row[1])
		require.NoError(t, err)
	}

	_, payload := f.forgetViaCLI(t, "alice")

	pg := certLayer(t, payload, "public.docs2_rows")
	assert.EqualValues(t, 2, pg.Deleted)
	assert.True(t, pg.VerifiedAbsent)
	pc := certLayer(t, payload, "docs2-notes/notes")
	assert.Equal(t, "pinecone", pc.Store)
	assert.EqualValues(t, 2, pc.Requested, "the ledger knew a1 and a2 from the SDK's upsert through the proxy")
	assert.EqualValues(t, 3, pc.Deleted, "a3 was found by a fetch filtered on user_id")
	assert.Zero(t, pc.Residual)
	assert.True(t, pc.VerifiedAbsent)
	assert.Contains(t, pc.VerifyMethod, "documents fetch of the ledger's")
	assert.Contains(t, pc.VerifyMethod, "every read's x-pinecone-max-indexed-lsn had reached the delete's x-pinecone-request-lsn")
	for _, q := range pc.VerifyQueries {
		assert.Contains(t, q, "/namespaces/notes/documents/fetch")
		assert.NotContains(t, q, "alice", "queries name placeholders, never the subject")
	}
	t.Logf("document layer verified by: %s", pc.VerifyMethod)

	assert.Equal(t, []any{"b1"}, step("read", upstream)["present"], "bob's document stays, alice's are gone")
	var left []string
	rows, err := app.Query(ctx, `SELECT id FROM docs2_rows ORDER BY id`)
	require.NoError(t, err)
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		left = append(left, id)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{"r3"}, left)

	assert.Equal(t, map[string]any{"name": "PineconeBadRequestError", "lt003": true}, step("again", proxied)["again"],
		"alice is tombstoned: her next document is refused")
}
