package ledger

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpen_RefusesALocationNamingNoLedgerOrBoth(t *testing.T) {
	for _, at := range []Location{{}, {SQLite: filepath.Join(t.TempDir(), "l.db"), Postgres: "host=x"}} {
		_, err := Open(context.Background(), at, Options{})
		require.ErrorIs(t, err, ErrNoLocation)
	}
}

// Both backends are reached through one handle with every capability:
// the tags, the journal, the observer, the transparency log's storage.
func TestOpen_EachBackendIsOneHandleWithEveryCapability(t *testing.T) {
	ctx := context.Background()
	conn := testPGConnString(t)
	for name, at := range map[string]Location{
		"sqlite":   {SQLite: filepath.Join(t.TempDir(), "ledger.db")},
		"postgres": {Postgres: conn},
	} {
		t.Run(name, func(t *testing.T) {
			opts := Options{}
			if at.Postgres != "" {
				opts.Schema = freshPGSchema(t, conn)
			}
			h, err := Open(ctx, at, opts)
			require.NoError(t, err)
			defer h.Close()
			assert.Equal(t, at, h.Location())

			id, err := h.Intend(ctx, []Entry{entry("public.docs", "1", "alice")})
			require.NoError(t, err)
			require.NoError(t, h.Confirm(ctx, id))
			held, err := h.Holds(ctx, []Entry{entry("public.docs", "1", "alice")})
			require.NoError(t, err)
			assert.Equal(t, []bool{true}, held)
			tombs, err := h.Tombstones(ctx)
			require.NoError(t, err)
			assert.Empty(t, tombs)
			require.NoError(t, h.Observe(ctx, nil))
			size, err := h.TransparencyLog().Size(ctx)
			require.NoError(t, err)
			assert.Zero(t, size)
		})
	}
}

func TestLocation_StringHasNoCredentials(t *testing.T) {
	assert.Equal(t, "postgres://db.internal:5433/lethe",
		Location{Postgres: "postgres://ledger_user:s3cret@db.internal:5433/lethe?sslmode=require"}.String())
	assert.Equal(t, "postgres://db.internal:5432/lethe",
		Location{Postgres: "host=db.internal port=5432 user=u password=s3cret dbname=lethe"}.String())
	assert.Equal(t, "/var/lib/lethe/ledger.db", Location{SQLite: "/var/lib/lethe/ledger.db"}.String())
}
