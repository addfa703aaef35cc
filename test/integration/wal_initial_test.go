//go:build integration

package integration

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/ledger"
)

// TestWAL_KillNineDuringTheInitialReadLosesNoRow kills the proxy with
// SIGKILL while its new slot's initial read records the rows the table
// already held, writes more rows while it is down, and starts it again:
// the ledger holds every row committed before the restart, once, and
// lethe-proxy ledger counts (which waits for the follower) says so.
func TestWAL_KillNineDuringTheInitialReadLosesNoRow(t *testing.T) {
	db := loadTestDB(t)
	const before, after = 100000, 5
	pgxTable(t, db, "wal_initial", "id text PRIMARY KEY, user_id text")
	direct := connect(t, db.URL(db.Addr(), ""))
	_, err := direct.Exec(ctxT(t), fmt.Sprintf(`INSERT INTO wal_initial SELECT 'b' || g, 'user' || (g %% 7) || '@example.com' FROM generate_series(1, %d) g`, before))
	require.NoError(t, err)
	bin, cfg, addr, slot := walProxyBinary(t, db, "public.wal_initial")

	// The slot is made before its rows are read: kill as soon as it is.
	proc := startProxyBinary(t, bin, cfg, addr)
	for deadline := time.Now().Add(60 * time.Second); ; {
		var made bool
		require.NoError(t, direct.QueryRow(ctxT(t), `SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)`, slot).Scan(&made))
		if made {
			break
		}
		require.False(t, time.Now().After(deadline), "the proxy made no slot")
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, proc.Process.Signal(syscall.SIGKILL))
	proc.Wait()
	l, err := ledger.OpenSQLite(filepath.Join(filepath.Dir(cfg), "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	key := ledger.SlotKey{Slot: slot}
	require.NoError(t, direct.QueryRow(ctxT(t), `SELECT current_database()::text, (SELECT system_identifier::text FROM pg_control_system())`).Scan(&key.Database, &key.System))
	read, err := l.InitialReadDone(context.Background(), key)
	require.NoError(t, err)
	require.NoError(t, l.Close())
	require.False(t, read, "the kill came after the initial read of %d rows; make the table bigger", before)

	_, err = direct.Exec(ctxT(t), fmt.Sprintf(`INSERT INTO wal_initial SELECT 'a' || g, 'user0@example.com' FROM generate_series(1, %d) g`, after))
	require.NoError(t, err)
	startProxyBinary(t, bin, cfg, addr)
	counts := exec.Command(bin, "ledger", "counts", "--config", cfg, "--wait", "60s")
	out, err := counts.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NotContains(t, string(out), "warning", "the wait for the follower ended with its initial read")
	require.Regexp(t, fmt.Sprintf(`postgres\s+public\.wal_initial\s+confirmed\s+%d\n`, before+after), string(out))
	require.Equal(t, 2, strings.Count(string(out), "\n"), "one line of records, all confirmed: %s", out)
}
