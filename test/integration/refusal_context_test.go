//go:build integration

package integration

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
)

// assertNoServerContext fails unless err is a server error without the
// fields that say where inside the server it was raised: a refusal is the
// proxy's own error, and the DO block that raises it ("PL/pgSQL function
// inline_code_block line 1 at RAISE") is nothing the application ran.
func assertNoServerContext(t *testing.T, err error) {
	t.Helper()
	var pe *pgconn.PgError
	require.True(t, errors.As(err, &pe), "a *pgconn.PgError, got %T: %v", err, err)
	assert.Empty(t, pe.Where, "Where")
	assert.Empty(t, pe.File, "File")
	assert.Zero(t, pe.Line, "Line")
	assert.Empty(t, pe.Routine, "Routine")
}

func TestCapture_StrictRefusalReadsAsTheProxysOwnError(t *testing.T) {
	db := loadTestDB(t)
	c := startCaptureProxy(t, db, capture.Strict, docsTable(t, db, "refusal_ctx"))
	// With an argument pgx sends even cache_statement's Exec as Parse, Bind,
	// Execute (without one it sends a Query).
	const unattributable = "INSERT INTO refusal_ctx (id, user_id) SELECT 'x' || g, $1 FROM generate_series(1, 3) g"
	for _, mode := range []string{"simple_protocol", "cache_statement"} {
		t.Run(mode, func(t *testing.T) {
			conn := connect(t, db.URL(c.Addr, "default_query_exec_mode="+mode))
			_, err := conn.Exec(ctxT(t), unattributable, "ann")
			require.Error(t, err)
			assert.Equal(t, capture.CodeUnattributed, pgCode(err))
			assert.Contains(t, pgMessage(err), "cannot be attributed")
			assertNoServerContext(t, err)

			// A server error on the same connection keeps its context.
			_, err = conn.Exec(ctxT(t), "DO $$BEGIN RAISE EXCEPTION 'from the application'; END$$")
			require.Error(t, err)
			var pe *pgconn.PgError
			require.ErrorAs(t, err, &pe)
			assert.Contains(t, pe.Where, "inline_code_block", "the application's own DO block is reported as the server reports it")

			_, err = conn.Exec(ctxT(t), "INSERT INTO refusal_ctx (id, user_id) VALUES ($1, $2)", "ok-"+mode, "ann")
			require.NoError(t, err, "the connection stays usable")
		})
	}
	assert.Equal(t, 2, countRows(t, db, "refusal_ctx"), "only the attributable writes")
}
