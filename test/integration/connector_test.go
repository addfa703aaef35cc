//go:build integration

package integration

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// TestConnector_ExistingQuotesIdentifiersAndBindsValues checks the store
// connector against a table and column whose names are SQL
// metacharacters, and ids that are SQL injection attempts.
func TestConnector_ExistingQuotesIdentifiersAndBindsValues(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	_, err := direct.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS "we""ird; schema"`)
	require.NoError(t, err)
	t.Cleanup(func() { direct.Exec(context.Background(), `DROP SCHEMA "we""ird; schema" CASCADE`) })
	_, err = direct.Exec(ctx, `CREATE TABLE "we""ird; schema"."t; DROP TABLE x --" ("i""d" text PRIMARY KEY)`)
	require.NoError(t, err)
	_, err = direct.Exec(ctx, `INSERT INTO "we""ird; schema"."t; DROP TABLE x --" VALUES ('a'), ('b''); DROP TABLE y; --')`)
	require.NoError(t, err)

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	found, err := store.Existing(ctx, `we"ird; schema.t; DROP TABLE x --`, `i"d`,
		[]string{"a", "b'); DROP TABLE y; --", "missing' OR '1'='1"})
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"a": true, "b'); DROP TABLE y; --": true}, found)
}
