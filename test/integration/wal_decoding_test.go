//go:build integration

package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// capture.wal_decoding_mem is the walsender's logical_decoding_work_mem:
// with the smallest value PostgreSQL accepts, a transaction of a few MB,
// far under the server's own setting, is spilled to disk by the follower's
// walsender. Were the setting not sent on the replication connection,
// nothing would spill.
func TestWAL_DecodingMemIsTheWalsendersSetting(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	var serverKB int
	require.NoError(t, direct.QueryRow(ctx, `SELECT setting::int FROM pg_settings WHERE name = 'logical_decoding_work_mem'`).Scan(&serverKB))
	if serverKB < 16<<10 {
		t.Skipf("the server's logical_decoding_work_mem is %dkB: a 4 MB transaction would spill without the proxy's setting", serverKB)
	}
	pgxTable(t, db, "wal_decoding", "id text PRIMARY KEY, user_id text, body text")
	// The key goes on in the capture section, after the table rules.
	f := newForgetBinary(t, db, "    - {table: public.wal_decoding, id: id, subjects: [user_id]}\n  wal_decoding_mem: 64kB")
	f.start(t)

	// About 4 MB in one transaction: 4,000 rows of 1 kB, stored inline.
	_, err := direct.Exec(ctx, `INSERT INTO wal_decoding SELECT 'r' || g, 'alice', repeat('x', 1000) FROM generate_series(1, 4000) g`)
	require.NoError(t, err)
	awaitFollowed(t, db, f.slot)

	var spilled int64
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := direct.QueryRow(ctx, `SELECT coalesce((SELECT spill_txns FROM pg_stat_replication_slots WHERE slot_name = $1), 0)`, f.slot).Scan(&spilled)
		return err == nil && spilled > 0
	}, 30*time.Second, 100*time.Millisecond, "the walsender spilled no transaction: it did not run with wal_decoding_mem: 64kB")
}
