package ledgeropen

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/ledger"
)

// lethe-proxy ledger's reads: counts and a subject's records from the
// ledger the configuration names, and an error naming the ledger when it
// does not open.
func TestReader_WritesCountsAndASubjectsRecords(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.db")
	hasher, err := ledger.NewHasher(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, err)
	l, err := ledger.OpenSQLite(path, ledger.Options{})
	require.NoError(t, err)
	id, err := l.Intend(context.Background(), []ledger.Entry{{Store: ledger.StorePostgres, Table: "public.docs", RecordID: "42", Subject: hasher.Hash("alice")}})
	require.NoError(t, err)
	require.NoError(t, l.Confirm(context.Background(), id))
	l.Close()

	read := Reader{Store: config.LedgerStore{SQLite: path}, Hasher: hasher}
	var out bytes.Buffer
	require.NoError(t, read.WriteCounts(context.Background(), &out))
	assert.Contains(t, out.String(), "postgres  public.docs  confirmed  1\n")
	out.Reset()
	require.NoError(t, read.WriteSubject(context.Background(), "alice", &out))
	assert.Contains(t, out.String(), "postgres  public.docs  42")
	out.Reset()
	require.NoError(t, read.WriteSubject(context.Background(), "bob", &out))
	assert.Equal(t, 1, strings.Count(out.String(), "\n"), "bob has no record: the header alone, got %q", out.String())

	missing := Reader{Store: config.LedgerStore{SQLite: filepath.Join(dir, "no-such-dir", "ledger.db")}}
	err = missing.WriteCounts(context.Background(), &out)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "opening "+filepath.Join(dir, "no-such-dir", "ledger.db")+": "), err.Error())
}
