package pgwing

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/ledger"
)

// fakeControl answers restore detection's questions as a server would;
// refused answers insufficient_privilege for pg_control_*.
type fakeControl struct {
	system   string
	timeline int64
	wal      uint64
	refused  bool
}

var errRefused = &pgconn.PgError{Code: "42501", Message: "permission denied for function pg_control_system"}

func (f *fakeControl) SystemIdentifier(context.Context) (string, error) {
	if f.refused {
		return "", errRefused
	}
	return f.system, nil
}

func (f *fakeControl) Timeline(context.Context) (int64, error) {
	if f.refused {
		return 0, errRefused
	}
	return f.timeline, nil
}

func (f *fakeControl) WALPosition(context.Context) (uint64, error) { return f.wal, nil }

func newRestoreWatch(t *testing.T, on config.OnRestore) (*restoreWatch, *ledger.SQLite) {
	t.Helper()
	l, err := ledger.OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	core := capture.New(capture.Config{})
	t.Cleanup(core.Close)
	return &restoreWatch{key: "postgres://db:5432/app", marks: l, core: core, onRestore: on,
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}, l
}

// Each signal alone is a restore: writes are held until replay clears the
// mark, and the next check releases them.
func TestRestoreWatch_EachSignalHoldsWritesUntilReplay(t *testing.T) {
	before := fakeControl{system: "7400000000000000001", timeline: 1, wal: 0x3000000}
	cases := map[string]struct {
		after fakeControl
		want  string
	}{
		"system identifier": {fakeControl{system: "7400000000000000002", timeline: 1, wal: 0x9000000}, "system identifier changed"},
		"timeline":          {fakeControl{system: before.system, timeline: 2, wal: 0x9000000}, "timeline changed from 1 to 2"},
		"WAL behind":        {fakeControl{system: before.system, timeline: 1, wal: 0x1000000}, "WAL position 0/1000000 is behind 0/3000100"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			rw, l := newRestoreWatch(t, config.OnRestoreRefuse)
			server := before
			got, err := rw.check(ctx, &server)
			require.NoError(t, err)
			require.Empty(t, got, "the first sight is recorded, not a restore")
			server.wal += 0x100
			got, err = rw.check(ctx, &server)
			require.NoError(t, err)
			require.Empty(t, got, "a WAL position ahead is no restore")
			require.False(t, rw.core.Held(ledger.StorePostgres))

			server = tc.after
			got, err = rw.check(ctx, &server)
			require.NoError(t, err)
			assert.Contains(t, got, tc.want)
			assert.True(t, rw.core.Held(ledger.StorePostgres))
			server.wal += 0x100
			got, err = rw.check(ctx, &server)
			require.NoError(t, err)
			assert.Contains(t, got, tc.want, "the restore waits for replay, across checks and restarts")
			assert.True(t, rw.core.Held(ledger.StorePostgres))

			_, err = l.ClearRestores(ctx) // lethe-proxy replay ran
			require.NoError(t, err)
			got, err = rw.check(ctx, &server)
			require.NoError(t, err)
			assert.Empty(t, got)
			assert.False(t, rw.core.Held(ledger.StorePostgres), "released once replay ran")
		})
	}
}

func TestRestoreWatch_WarnRelaysWrites(t *testing.T) {
	ctx := context.Background()
	rw, _ := newRestoreWatch(t, config.OnRestoreWarn)
	server := fakeControl{system: "1", timeline: 1, wal: 100}
	_, err := rw.check(ctx, &server)
	require.NoError(t, err)
	server.timeline = 2
	got, err := rw.check(ctx, &server)
	require.NoError(t, err)
	assert.NotEmpty(t, got)
	assert.False(t, rw.core.Held(ledger.StorePostgres), "warn never holds")
}

// A role refused pg_control_* still detects a WAL position behind, and
// keeps the identifier recorded by a role that could read it.
func TestRestoreWatch_RefusedControlFunctionsDegradeToTheWALPosition(t *testing.T) {
	ctx := context.Background()
	rw, l := newRestoreWatch(t, config.OnRestoreRefuse)
	server := fakeControl{system: "1", timeline: 1, wal: 500}
	_, err := rw.check(ctx, &server)
	require.NoError(t, err)
	server = fakeControl{refused: true, wal: 600, timeline: 9, system: "2"}
	got, err := rw.check(ctx, &server)
	require.NoError(t, err)
	assert.Empty(t, got, "identifier and timeline are not compared when they cannot be read")
	assert.True(t, rw.degradedLogged)
	seen, _, err := l.StoreSeen(ctx, rw.key)
	require.NoError(t, err)
	assert.Equal(t, "1", seen.System, "what was recorded is kept")
	server.wal = 100
	got, err = rw.check(ctx, &server)
	require.NoError(t, err)
	assert.Contains(t, got, "is behind")
	assert.True(t, rw.core.Held(ledger.StorePostgres))
}

func TestStoreKey_NamesHostPortAndDatabaseOnly(t *testing.T) {
	key, err := storeKey("postgres://app:secret@db.internal:6543/shop?sslmode=disable")
	require.NoError(t, err)
	assert.Equal(t, "postgres://db.internal:6543/shop", key)
}
