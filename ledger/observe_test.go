package ledger

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSQLite_ObserveNoSyncLeavesTheWriterFull: ObserveNoSync commits with
// synchronous=NORMAL on the writer that forget and the transparency log
// share, which must be FULL again for them afterwards.
func TestSQLite_ObserveNoSyncLeavesTheWriterFull(t *testing.T) {
	l, err := OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), Options{})
	require.NoError(t, err)
	defer l.Close()
	ctx := context.Background()
	require.NoError(t, l.ObserveNoSync(ctx, []Change{{Kind: ChangeWrite, Store: StorePostgres, Table: "public.docs", RecordID: "1",
		Subjects: []SubjectHash{testHasher.Hash("alice")}}}))
	var sync int
	require.NoError(t, l.writer.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync))
	require.Equal(t, 2, sync, "the writer is FULL after ObserveNoSync")
}
