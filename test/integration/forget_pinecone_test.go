//go:build integration

package integration

import (
	"fmt"
	"os"
	"testing"
	"time"

	gopinecone "github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// TestForget_AcrossPostgresAndPinecone: one proxy captures a PostgreSQL
// table and a Pinecone namespace; alice and bob write to both through it,
// and one of alice's vectors is written straight to the index (before
// Lethe). One forget of alice deletes her rows and vectors in both stores,
// including the one the ledger never saw, while the index makes deletes
// visible only after a delay; bob keeps everything; one certificate
// covers both stores and verifies.
func TestForget_AcrossPostgresAndPinecone(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "xs_docs", "id text PRIMARY KEY, user_id text, embedding vector(3)")
	_, upstream := startEmulator(t, emulator.Config{APIKey: "xstore-key", DeleteDelay: 800 * time.Millisecond})
	pcAddr := freePort(t)
	f := newForgetBinary(t, db, `    - {table: public.xs_docs, id: id, subjects: [user_id]}`, fmt.Sprintf(`pinecone:
  listen: %s
  indexes:
    - name: docs
      host: %s
      namespaces: [{namespace: notes, subjects: [user_id]}]
`, pcAddr, upstream))
	f.env = append(f.env, "LETHE_PINECONE_API_KEY=xstore-key")
	f.start(t)

	ctx := ctxT(t)
	app := connect(t, db.URL(f.proxyAddr, "sslmode=disable"))
	for _, row := range [][2]string{{"a1", "alice"}, {"a2", "alice"}, {"b1", "bob"}} {
		_, err := app.Exec(ctx, `INSERT INTO xs_docs (id, user_id, embedding) VALUES ($1, $2, '[1,2,3]')`, row[0], row[1])
		require.NoError(t, err)
	}
	vec := func(id, who string) *gopinecone.Vector {
		md, err := structpb.NewStruct(map[string]any{"user_id": who, "text": "note of " + id})
		require.NoError(t, err)
		values := []float32{1, 0.5, 0.25}
		return &gopinecone.Vector{Id: id, Values: &values, Metadata: md}
	}
	index := func(host string) *gopinecone.IndexConnection {
		pc, err := gopinecone.NewClient(gopinecone.NewClientParams{ApiKey: "xstore-key"})
		require.NoError(t, err)
		idx, err := pc.Index(gopinecone.NewIndexConnParams{Host: host, Namespace: "notes"})
		require.NoError(t, err)
		t.Cleanup(func() { idx.Close() })
		return idx
	}
	proxied, direct := index("http://"+pcAddr), index(upstream)
	_, err := proxied.UpsertVectors(ctx, []*gopinecone.Vector{vec("p1", "alice"), vec("p2", "alice"), vec("p3", "bob")})
	require.NoError(t, err)
	_, err = direct.UpsertVectors(ctx, []*gopinecone.Vector{vec("p4", "alice")}) // written before Lethe
	require.NoError(t, err)

	_, payload := f.forgetViaCLI(t, "alice")

	pg := certLayer(t, payload, "public.xs_docs")
	assert.EqualValues(t, 2, pg.Deleted)
	assert.True(t, pg.VerifiedAbsent)
	pc := certLayer(t, payload, "docs/notes")
	assert.Equal(t, "pinecone", pc.Store)
	assert.EqualValues(t, 2, pc.Requested, "the ledger knew p1 and p2")
	assert.EqualValues(t, 3, pc.Deleted, "p4 was found by its metadata")
	assert.Zero(t, pc.Residual)
	assert.True(t, pc.VerifiedAbsent)
	assert.NotEmpty(t, pc.VerifyMethod)
	t.Logf("pinecone layer verified by: %s; queries %q", pc.VerifyMethod, pc.VerifyQueries)
	assert.NotEmpty(t, pc.VerifyQueries)
	for _, q := range pc.VerifyQueries {
		assert.NotContains(t, q, "alice", "queries name placeholders, never the subject")
	}

	fetched, err := direct.FetchVectors(ctx, []string{"p1", "p2", "p3", "p4"})
	require.NoError(t, err)
	assert.Equal(t, []string{"p3"}, keys(fetched.Vectors), "bob's vector stays, alice's are gone")
	var left []string
	rows, err := app.Query(ctx, `SELECT id FROM xs_docs ORDER BY id`)
	require.NoError(t, err)
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		left = append(left, id)
	}
	assert.Equal(t, []string{"b1"}, left)

	// Alice is tombstoned in both stores now.
	_, err = proxied.UpsertVectors(ctx, []*gopinecone.Vector{vec("p5", "alice")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "LT003")
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestForget_PineconeAlone: a proxy with no PostgreSQL at all (no
// postgres section, no capture.tables) captures and forgets Pinecone
// records and certifies it.
func TestForget_PineconeAlone(t *testing.T) {
	db := loadTestDB(t) // only for the shared forget rig's keys and tokens
	_, upstream := startEmulator(t, emulator.Config{APIKey: "alone-key"})
	pcAddr := freePort(t)
	f := newForgetBinary(t, db, "")
	require.NoError(t, os.WriteFile(f.cfg, []byte(fmt.Sprintf(`pinecone:
  listen: %s
  indexes:
    - name: docs
      host: %s
      namespaces: [{namespace: "*", subjects: [user_id]}]
capture:
  ledger: {sqlite: ledger.db}
forget:
  signing_key: signing.pem
  log_origin: lethe.test/crash-log
  admin: {listen: %s, tokens_file: tokens.json}
`, pcAddr, upstream, f.admin)), 0o600))
	f.env = append(f.env, "LETHE_PINECONE_API_KEY=alone-key")
	f.start(t)

	ctx := ctxT(t)
	pc, err := gopinecone.NewClient(gopinecone.NewClientParams{ApiKey: "alone-key"})
	require.NoError(t, err)
	idx, err := pc.Index(gopinecone.NewIndexConnParams{Host: "http://" + pcAddr, Namespace: "chat"})
	require.NoError(t, err)
	t.Cleanup(func() { idx.Close() })
	for _, v := range [][2]string{{"m1", "carol"}, {"m2", "carol"}, {"m3", "dan"}} {
		md, err := structpb.NewStruct(map[string]any{"user_id": v[1]})
		require.NoError(t, err)
		values := []float32{1, 2}
		_, err = idx.UpsertVectors(ctx, []*gopinecone.Vector{{Id: v[0], Values: &values, Metadata: md}})
		require.NoError(t, err)
	}
	_, payload := f.forgetViaCLI(t, "carol")
	require.Len(t, payload.Layers, 1)
	l := payload.Layers[0]
	assert.Equal(t, "pinecone", l.Store)
	assert.Equal(t, "docs/*", l.Table)
	assert.EqualValues(t, 2, l.Deleted)
	assert.True(t, l.VerifiedAbsent)
	fetched, err := idx.FetchVectors(ctx, []string{"m1", "m2", "m3"})
	require.NoError(t, err)
	assert.Equal(t, []string{"m3"}, keys(fetched.Vectors))
}
