package ledger

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var sqliteBackend = backend{
	newStore: func(t *testing.T) (func(t *testing.T) Ledger, func(t *testing.T) []byte) {
		path := filepath.Join(t.TempDir(), "ledger.db")
		open := func(t *testing.T) Ledger {
			l, err := OpenSQLite(path, Options{})
			require.NoError(t, err)
			return l
		}
		// dump is every byte SQLite keeps for the ledger: the file and
		// its WAL and shared-memory companions, if any are left.
		dump := func(t *testing.T) []byte {
			var all []byte
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				b, err := os.ReadFile(p)
				if os.IsNotExist(err) {
					continue
				}
				require.NoError(t, err)
				all = append(all, b...)
			}
			return all
		}
		return open, dump
	},
}

func TestSQLite_Contract(t *testing.T) { runContract(t, sqliteBackend) }

func TestSQLite_OpenInMissingDirectoryIsUnavailable(t *testing.T) {
	_, err := OpenSQLite(filepath.Join(t.TempDir(), "no", "such", "dir", "ledger.db"), Options{})
	require.ErrorIs(t, err, ErrUnavailable)
}

func TestSQLite_UsesWALAndFullSync(t *testing.T) {
	l, err := OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), Options{})
	require.NoError(t, err)
	defer l.Close()
	ctx := context.Background()
	var mode string
	var sync int
	require.NoError(t, l.writer.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode))
	require.NoError(t, l.writer.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync))
	require.Equal(t, "wal", mode)
	require.Equal(t, 2, sync, "synchronous=FULL")
	require.NoError(t, l.readers.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync))
	require.Equal(t, 2, sync, "synchronous=FULL on read connections too")
	var version int
	require.NoError(t, l.readers.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&version))
	require.Equal(t, len(sqliteMigrations), version)

	require.NoError(t, l.pendingWriter.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode))
	require.NoError(t, l.pendingWriter.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync))
	require.Equal(t, "wal", mode, "the pending file")
	require.Equal(t, 2, sync, "synchronous=FULL in the pending file")
	require.NoError(t, l.pendingWriter.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version))
	require.Equal(t, pendingSchemaVersion, version)
}

// TestSQLite_DecisionsLeaveTheWriterFull: a batch of decisions commits
// with synchronous=NORMAL (relaxedSync), and the writer it shares with
// forget and the transparency log is FULL again afterwards; so is the
// pending file's writer for the next intent.
func TestSQLite_DecisionsLeaveTheWriterFull(t *testing.T) {
	l, err := OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), Options{})
	require.NoError(t, err)
	defer l.Close()
	ctx := context.Background()
	id := intend(t, l, entry("public.docs", "1", "alice"))
	require.NoError(t, l.Confirm(ctx, id))
	var sync int
	require.NoError(t, l.writer.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync))
	require.Equal(t, 2, sync, "the ledger file's writer is FULL after a decision")
	intend(t, l, entry("public.docs", "2", "alice"))
	require.True(t, l.pendingFull)
	require.NoError(t, l.pendingWriter.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync))
	require.Equal(t, 2, sync, "the pending file's writer is FULL after an intent")
}

// TestSQLite_IntentNoSyncSkipsTheFsync: with IntentNoSync the pending
// file commits intents with synchronous=NORMAL, which in WAL mode does not
// fsync at commit (the WAL reaches the disk at the next checkpoint), so an
// intent is not on disk when Intend returns; by default it is FULL. The
// ledger file is FULL either way: forget and the transparency log keep
// their guarantees.
//
// With FollowedStores, IntentNoSync covers only the intents of those
// stores: a Pinecone write's intent, which no follower stands in for, is
// FULL beside PostgreSQL's NORMAL ones.
func TestSQLite_IntentNoSyncSkipsTheFsync(t *testing.T) {
	pinecone := Entry{Store: StorePinecone, Table: "idx/ns", RecordID: "v1", Subject: testHasher.Hash("alice")}
	for _, tc := range []struct {
		sync        IntentSync
		followed    []Store
		entries     []Entry
		pendingMode int
	}{
		{IntentDurable, nil, []Entry{entry("public.docs", "1", "alice")}, 2},
		{IntentNoSync, nil, []Entry{entry("public.docs", "1", "alice")}, 1},
		{IntentNoSync, nil, []Entry{pinecone}, 1},
		{IntentNoSync, []Store{StorePostgres}, []Entry{entry("public.docs", "1", "alice")}, 1},
		{IntentNoSync, []Store{StorePostgres}, []Entry{pinecone}, 2},
		{IntentNoSync, []Store{StorePostgres}, []Entry{entry("public.docs", "1", "alice"), pinecone}, 2},
	} {
		l, err := OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), Options{IntentSync: tc.sync, FollowedStores: tc.followed})
		require.NoError(t, err)
		ctx := context.Background()
		id := intend(t, l, tc.entries...)
		var mode int
		require.NoError(t, l.pendingWriter.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&mode))
		require.Equal(t, tc.pendingMode, mode, "the pending file's synchronous mode after an intent (IntentSync %d, followed %v, entries of %v)", tc.sync, tc.followed, tc.entries[len(tc.entries)-1].Store)
		require.NoError(t, l.Confirm(ctx, id))
		require.NoError(t, l.writer.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&mode))
		require.Equal(t, 2, mode, "the ledger file's writer stays FULL (IntentSync %d)", tc.sync)
		require.NoError(t, l.Close())
	}
}
