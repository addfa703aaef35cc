//go:build integration

package integration

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// TestForget_MistypedSubjectIsNeverCertifiedAsErased: bob@example.com has
// rows in a text column and under a JSON path, written through the proxy.
// A preview of Bob@Example.com or of "bob@example.com " (case, a trailing
// space) finds nothing, says so, and counts the near misses in the ledger
// and in each table (counts only); confirming it without --nothing-found
// is refused, naming the flag and the counts. With the flag, the
// certificate says nothing was found, and bob's rows are all still there.
// A forget of bob@example.com itself then deletes them, with the usual
// claim.
func TestForget_MistypedSubjectIsNeverCertifiedAsErased(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "nm_docs", "id text PRIMARY KEY, user_id text, embedding vector(3)")
	pgxTable(t, db, "nm_chunks", "id text PRIMARY KEY, cmetadata jsonb, embedding vector(3)")
	f := newForgetBinary(t, db, `    - {table: public.nm_docs, id: id, subjects: [user_id]}
    - {table: public.nm_chunks, id: id, subjects: ["cmetadata->>'user_id'"]}`)
	f.start(t)
	ctx := ctxT(t)
	app := connect(t, db.URL(f.proxyAddr, "sslmode=disable"))
	for _, q := range []string{
		`INSERT INTO nm_docs VALUES ('d1', 'bob@example.com', '[1,2,3]'), ('d2', 'bob@example.com', '[1,2,3]'), ('d3', 'carol@example.com', '[1,2,3]')`,
		`INSERT INTO nm_chunks VALUES ('c1', '{"user_id": "bob@example.com"}', '[1,2,3]'), ('c2', '{"user_id": "carol@example.com"}', '[1,2,3]')`,
	} {
		_, err := app.Exec(ctx, q)
		require.NoError(t, err)
	}
	bobRows := func() int {
		var n int
		require.NoError(t, app.QueryRow(ctx, `SELECT (SELECT count(*) FROM nm_docs WHERE user_id = 'bob@example.com')
			+ (SELECT count(*) FROM nm_chunks WHERE cmetadata->>'user_id' = 'bob@example.com')`).Scan(&n))
		return n
	}

	type nearMisses struct {
		LedgerRecords int `json:"ledger_records"`
		Records       int `json:"records"`
	}
	type preview struct {
		Layers []struct {
			Table         string      `json:"table"`
			LedgerRecords int         `json:"ledger_records"`
			Rows          int         `json:"rows"`
			NearMisses    *nearMisses `json:"near_misses"`
		} `json:"layers"`
		NothingFound bool        `json:"nothing_found"`
		NearMisses   *nearMisses `json:"near_misses"`
		Warning      string      `json:"warning"`
		Token        string      `json:"confirm_token"`
	}
	previewOf := func(t *testing.T, subject string) preview {
		t.Helper()
		out, err := f.cli(t, subject+"\n", "forget", "preview")
		require.NoError(t, err)
		var pv preview
		require.NoError(t, json.Unmarshal([]byte(out), &pv), out)
		assert.NotContains(t, out, "bob@", "counts only, never a spelling")
		return pv
	}

	for _, typo := range []string{"Bob@Example.com", "bob@example.com "} {
		t.Run("preview and refusal of "+map[string]string{"Bob@Example.com": "case", "bob@example.com ": "trailing space"}[typo], func(t *testing.T) {
			pv := previewOf(t, typo)
			require.True(t, pv.NothingFound)
			assert.Equal(t, &nearMisses{LedgerRecords: 3, Records: 3}, pv.NearMisses)
			near := map[string]nearMisses{}
			for _, l := range pv.Layers {
				assert.Zero(t, l.LedgerRecords, l.Table)
				assert.Zero(t, l.Rows, l.Table)
				require.NotNil(t, l.NearMisses, l.Table)
				near[l.Table] = *l.NearMisses
			}
			assert.Equal(t, map[string]nearMisses{"public.nm_docs": {2, 2}, "public.nm_chunks": {1, 1}}, near)
			assert.Contains(t, pv.Warning, "No records of this subject were found in any layer")

			_, err := f.cli(t, typo+"\n", "forget", "confirm", "--token", pv.Token)
			require.Error(t, err, "a forget that found nothing is not confirmed without the flag")
			assert.Contains(t, err.Error(), "--nothing-found")
			assert.Contains(t, err.Error(), "3 ledger records and 3 store records")
			assert.Contains(t, err.Error(), "HTTP 409")
			assert.NotContains(t, err.Error(), "bob@")
			assert.Equal(t, 3, bobRows())
		})
	}

	t.Run("confirmed with --nothing-found", func(t *testing.T) {
		pv := previewOf(t, "Bob@Example.com")
		out, err := f.cli(t, "Bob@Example.com\n", "forget", "confirm", "--token", pv.Token, "--nothing-found")
		require.NoError(t, err)
		p := f.certified(t, out)
		assert.Contains(t, p.Claim.Statement, "No records of the data subject identified by this certificate were found in any layer")
		assert.Contains(t, p.Claim.Statement, "compared as exact bytes")
		for _, table := range []string{"public.nm_docs", "public.nm_chunks"} {
			l := certLayer(t, p, table)
			assert.Zero(t, l.Requested, table)
			assert.Zero(t, l.Deleted, table)
			assert.True(t, l.VerifiedAbsent, table)
		}
		assert.Zero(t, p.DeletedIDs.Count)
		assert.Equal(t, 3, bobRows(), "bob's rows are untouched")
	})

	t.Run("the subject as stored", func(t *testing.T) {
		pv, p := f.forgetViaCLI(t, "bob@example.com")
		assert.Equal(t, map[string]float64{"ledger_records": 2, "rows": 2}, pv["public.nm_docs"])
		assert.Equal(t, map[string]float64{"ledger_records": 1, "rows": 1}, pv["public.nm_chunks"])
		assert.Contains(t, p.Claim.Statement, "Lethe deleted the records of the data subject")
		assert.EqualValues(t, 2, certLayer(t, p, "public.nm_docs").Deleted)
		assert.EqualValues(t, 1, certLayer(t, p, "public.nm_chunks").Deleted)
		assert.EqualValues(t, 3, p.DeletedIDs.Count)
		assert.Zero(t, bobRows())
		var carol int
		require.NoError(t, app.QueryRow(ctx, `SELECT (SELECT count(*) FROM nm_docs) + (SELECT count(*) FROM nm_chunks)`).Scan(&carol))
		assert.Equal(t, 2, carol, "carol's rows stay")
	})
	assert.NotContains(t, mustRead(t, f.cfg+".log"), "bob@", "no spelling of the subject reaches the logs")
	assert.NotContains(t, mustRead(t, f.cfg+".log"), "Bob@")
}

// certified waits for the request whose receipt confirm printed to
// complete, fetches its certificate with the CLI, checks that it verifies,
// and returns its payload.
func (f *forgetBinary) certified(t *testing.T, receiptJSON string) certificate.Payload {
	t.Helper()
	var receipt struct {
		RequestID string `json:"request_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(receiptJSON), &receipt), receiptJSON)
	var st map[string]any
	require.Eventually(t, func() bool {
		st = f.status(t, receipt.RequestID)
		return st["status"] != "received"
	}, 60*time.Second, 50*time.Millisecond)
	require.Equal(t, "completed", st["status"], "%v", st)
	certFile := filepath.Join(f.dir, receipt.RequestID+".json")
	_, err := f.cli(t, "", "forget", "certificate", receipt.RequestID, "--out", certFile)
	require.NoError(t, err)
	out, err := f.cli(t, "", "verify", "--keys", filepath.Join(f.dir, "keys.json"), certFile)
	require.NoError(t, err, out)
	res := certificate.Verify([]byte(mustRead(t, certFile)), mustKeys(t, filepath.Join(f.dir, "keys.json")), time.Now())
	require.Equal(t, certificate.VerdictValid, res.Verdict, res.Reason)
	return *res.Payload
}

// TestConnector_NearMissesIgnoreCaseSpaceAndUnicodeForm: the PostgreSQL
// layer counts the rows naming the subject once case, surrounding white
// space (Unicode's, NBSP included) and normalisation form are ignored, in
// a text column of another collation, a jsonb path and the elements of an
// array there; not rows naming it exactly, nor other people, nor objects;
// a table that does not exist has none.
func TestConnector_NearMissesIgnoreCaseSpaceAndUnicodeForm(t *testing.T) {
	db := loadTestDB(t)
	pgxTable(t, db, "nm_shapes", `id int PRIMARY KEY, owner text COLLATE "C", meta jsonb, embedding vector(3)`)
	ctx := ctxT(t)
	subject := norm.NFC.String("Zoë@Example.com")
	direct := connect(t, db.URL(db.Addr(), ""))
	_, err := direct.Exec(ctx, `INSERT INTO nm_shapes (id, owner, meta) VALUES
		(1, $1, NULL),                                   -- decomposed, lower case: near
		(2, $2, NULL),                                   -- white space around (NBSP too), upper case: near
		(3, $3, NULL),                                   -- exact: not near
		(4, NULL, jsonb_build_object('user_id', $1::text)), -- jsonb path: near
		(5, NULL, jsonb_build_object('user_id', jsonb_build_array('x', $2::text))), -- in an array: near
		(6, NULL, jsonb_build_object('user_id', jsonb_build_object('a', $1::text))), -- inside an object: no
		(7, NULL, '{"user_id": 5}'),                     -- a number: no
		(8, 'zoe@example.com', NULL),                    -- another person: no
		(9, $1, jsonb_build_object('user_id', $3::text))  -- exact under the path: not near`,
		norm.NFD.String("zoë@example.com"), " \u00a0ZOË@EXAMPLE.COM\t", subject)
	require.NoError(t, err)

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	rule := pgstore.Table{Schema: "public", Name: "nm_shapes", ID: "id",
		Subjects: []pgstore.Subject{{Column: "owner"}, {Column: "meta", Path: []string{"user_id"}}}}
	layer, err := pgstore.NewLayer(ctx, store, rule, false)
	require.NoError(t, err)
	exact, err := layer.Matching(ctx, subject, nil)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"3", "9"}, exact)
	n, err := layer.NearMisses(ctx, subject, nil)
	require.NoError(t, err)
	assert.EqualValues(t, 4, n, "rows 1, 2, 4 and 5")

	missing, err := pgstore.NewLayer(ctx, store, pgstore.Table{Schema: "public", Name: "nm_never_created", ID: "id",
		Subjects: []pgstore.Subject{{Column: "owner"}}}, false)
	require.NoError(t, err)
	n, err = missing.NearMisses(ctx, subject, nil)
	require.NoError(t, err)
	assert.Zero(t, n)
}
