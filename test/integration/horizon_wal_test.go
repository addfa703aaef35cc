//go:build integration

package integration

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgwing"
)

// TestHorizon_PGWALNamesTheLaggingSlot: on real PostgreSQL, after a
// delete, the pg_wal horizon is a condition naming a slot that lags (a
// slot reserving WAL from before the delete, as a stalled WAL follower's
// does: physical here, since creating a logical slot waits for every
// running transaction of the shared test server), with the LSN it must
// pass; once the slot is gone it no longer names it.
func TestHorizon_PGWALNamesTheLaggingSlot(t *testing.T) {
	db := loadTestDB(t)
	ctx := ctxT(t)
	slot := fmt.Sprintf("horizon_follower_%d", os.Getpid())
	extDropTables(t, db, "public.horizon_docs")
	extExec(t, db, "SELECT pg_create_physical_replication_slot('"+slot+"', true)")
	t.Cleanup(func() {
		extExec(t, db, "SELECT pg_drop_replication_slot('"+slot+"') FROM pg_replication_slots WHERE slot_name = '"+slot+"'")
	})
	extExec(t, db, "CREATE TABLE public.horizon_docs (id text PRIMARY KEY, user_id text)",
		"INSERT INTO public.horizon_docs VALUES ('a', 'horizon-alice'), ('b', 'horizon-bob')",
		"DELETE FROM public.horizon_docs WHERE user_id = 'horizon-alice'")

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	hs := pgwing.Horizon(ctx, store, config.CopyRetention{Backups: config.Kept{Declared: true, Period: 35 * 24 * time.Hour}}, time.Now())
	byCopy := map[string]connector.Horizon{}
	for _, h := range hs {
		byCopy[h.Copy] = h
	}
	wal := byCopy["pg_wal"]
	require.Equal(t, connector.HorizonConditional, wal.Status, wal.Basis)
	require.Contains(t, wal.Basis, "replication slot "+slot+" (physical, restart_lsn ")
	// The slot must pass the delete's LSN, which is after its restart_lsn.
	i := strings.Index(wal.Basis, slot+" (physical, restart_lsn ")
	var restart, past string
	_, err = fmt.Sscanf(wal.Basis[i+len(slot+" (physical, restart_lsn "):], "%s advances past %s", &restart, &past)
	require.NoError(t, err, wal.Basis)
	r, err := pglogrepl.ParseLSN(strings.TrimSuffix(restart, ")"))
	require.NoError(t, err)
	d, err := pglogrepl.ParseLSN(strings.TrimRight(past, ",;"))
	require.NoError(t, err, wal.Basis)
	require.Less(t, uint64(r), uint64(d))
	require.Equal(t, connector.HorizonUnknown, byCopy["wal_archive"].Status)
	require.Equal(t, connector.HorizonDated, byCopy["backups"].Status)

	extExec(t, db, "SELECT pg_drop_replication_slot('"+slot+"')")
	for _, h := range pgwing.Horizon(ctx, store, config.CopyRetention{}, time.Now()) {
		if h.Copy == "pg_wal" {
			require.NotContains(t, h.Basis, slot)
		}
	}
}
