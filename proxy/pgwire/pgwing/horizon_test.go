package pgwing

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/connector"
)

var horizonRead = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)

// quietServer is a server whose last checkpoint began a minute ago, with
// no slot, no wal_keep_size and no standby.
func quietServer() walFacts {
	return walFacts{
		ReadAt: horizonRead, Role: "app", LSN: 0x3000148,
		Redo: 0x2FFF000, CheckpointAt: horizonRead.Add(-time.Minute),
		MaxWALSize: 1 << 30, CheckpointTimeout: 5 * time.Minute, CompletionTarget: 0.9,
	}
}

func byCopy(hs []connector.Horizon) map[string]connector.Horizon {
	out := map[string]connector.Horizon{}
	for _, h := range hs {
		out[h.Copy] = h
	}
	return out
}

// TestWALHorizon_FromTheServersAnswers: pg_wal is dated by the next
// checkpoint when nothing else keeps the segment, a condition naming
// each slot at or before the delete (and wal_keep_size) when something
// does; a refused question makes it unknown with the grant.
func TestWALHorizon_FromTheServersAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(f *walFacts)
		status string
		until  time.Time
		basis  []string
	}{
		{name: "only the checkpoint", status: connector.HorizonDated,
			// began 09:59, + 5m timeout + 0.9 × 5m spread, rounded up
			until: time.Date(2026, 12, 6, 10, 8, 31, 0, time.UTC),
			basis: []string{"at or before LSN 0/3000148", "a checkpoint after it completes", "max_wal_size (1024 MB)"}},
		{name: "idle server: the next checkpoint from now", edit: func(f *walFacts) { f.CheckpointAt = horizonRead.Add(-time.Hour) },
			status: connector.HorizonDated, until: time.Date(2026, 12, 6, 10, 9, 31, 0, time.UTC)},
		{name: "checkpoint already past", edit: func(f *walFacts) { f.Redo = 0x3000200 },
			status: connector.HorizonDated, until: horizonRead, basis: []string{"redo point 0/3000200 is already past it"}},
		{name: "the follower's slot lags", edit: func(f *walFacts) {
			f.Slots = []slotFacts{{Name: "lethe_app", Type: "logical", RestartLSN: 0x2FFF800, Reserves: true},
				{Name: "ahead", Type: "physical", RestartLSN: 0x3000200, Reserves: true}, {Name: "unreserved", Type: "physical"}}
		}, status: connector.HorizonConditional,
			basis: []string{"replication slot lethe_app (logical, restart_lsn 0/2FFF800) advances past 0/3000148"}},
		{name: "wal_keep_size", edit: func(f *walFacts) { f.WALKeepSize = 64 << 20 },
			status: connector.HorizonConditional, basis: []string{"64 MB more WAL is written after it (wal_keep_size)"}},
		{name: "pg_control_checkpoint refused", edit: func(f *walFacts) {
			f.CheckpointErr = "ERROR: permission denied for function pg_control_checkpoint (SQLSTATE 42501)"
		}, status: connector.HorizonUnknown,
			basis: []string{"could not read pg_control_checkpoint()", "42501", "GRANT EXECUTE ON FUNCTION pg_control_checkpoint() TO app"}},
		{name: "WAL position refused", edit: func(f *walFacts) { f.LSNErr = "permission denied" },
			status: connector.HorizonUnknown, basis: []string{"pg_current_wal_lsn()"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := quietServer()
			if tc.edit != nil {
				tc.edit(&f)
			}
			h := byCopy(walHorizons(f, config.CopyRetention{}, horizonRead))["pg_wal"]
			require.Equal(t, tc.status, h.Status, h.Basis)
			require.Equal(t, tc.until, h.Until, h.Basis)
			for _, want := range tc.basis {
				require.Contains(t, h.Basis, want)
			}
			if tc.status == connector.HorizonConditional {
				require.NotContains(t, h.Basis, "slot ahead", "a slot past the delete does not hold it")
				require.NotContains(t, h.Basis, "unreserved")
			}
		})
	}
}

// TestWALHorizon_ArchivesAndBackupsFromDeclaredRetention: undeclared is
// unknown and names the setting; a period dates from the delete; none is
// dated at the delete.
func TestWALHorizon_ArchivesAndBackupsFromDeclaredRetention(t *testing.T) {
	deleted := horizonRead.Add(-time.Second)
	hs := byCopy(walHorizons(quietServer(), config.CopyRetention{}, deleted))
	require.Equal(t, connector.HorizonUnknown, hs["wal_archive"].Status)
	require.Contains(t, hs["wal_archive"].Basis, "not declared: set postgres.retention.wal_archive")
	require.Equal(t, connector.HorizonUnknown, hs["backups"].Status)
	require.Contains(t, hs["backups"].Basis, "postgres.retention.backups")

	hs = byCopy(walHorizons(quietServer(), config.CopyRetention{
		WALArchive: config.Kept{Declared: true, Period: 30 * 24 * time.Hour},
		Backups:    config.Kept{Declared: true, None: true},
	}, deleted))
	require.Equal(t, connector.HorizonDated, hs["wal_archive"].Status)
	require.Equal(t, deleted.Add(30*24*time.Hour), hs["wal_archive"].Until)
	require.Equal(t, connector.HorizonDated, hs["backups"].Status)
	require.Equal(t, deleted, hs["backups"].Until)
	require.Contains(t, hs["backups"].Basis, "declared none")
}

// TestWALHorizon_Replicas: no standby visible is unknown; a hidden
// replay position is unknown naming pg_read_all_stats; a standby behind
// the delete is a condition; all past it is dated when read.
func TestWALHorizon_Replicas(t *testing.T) {
	for _, tc := range []struct {
		name     string
		standbys []standbyFacts
		status   string
		basis    string
	}{
		{"none visible", nil, connector.HorizonUnknown, "pg_stat_replication lists none"},
		{"position hidden", []standbyFacts{{Name: "replica1"}}, connector.HorizonUnknown, "GRANT pg_read_all_stats (or pg_monitor) TO app"},
		{"one behind", []standbyFacts{{Name: "replica1", ReplayLSN: 0x3000200, Visible: true}, {Name: "replica2", ReplayLSN: 0x2000000, Visible: true, ReplayLag: 3 * time.Second, HasLag: true}},
			connector.HorizonConditional, "standby replica2 replays past LSN 0/3000148 (replay_lsn 0/2000000, replay_lag 3s when read)"},
		{"all past", []standbyFacts{{Name: "replica1", ReplayLSN: 0x3000200, Visible: true}}, connector.HorizonDated, "had replayed past LSN 0/3000148"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := quietServer()
			f.Standbys = tc.standbys
			h := byCopy(walHorizons(f, config.CopyRetention{}, horizonRead))["replicas"]
			require.Equal(t, tc.status, h.Status, h.Basis)
			require.True(t, strings.Contains(h.Basis, tc.basis), h.Basis)
			require.Equal(t, tc.status == connector.HorizonDated, !h.Until.IsZero())
		})
	}
}
