package capture

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// A held store's writes are refused with the hold's refusal until
// Release; deletes and the other store's writes pass.
func TestHold_RefusesTheStoresWritesUntilRelease(t *testing.T) {
	h, err := ledger.NewHasher(make([]byte, 32))
	require.NoError(t, err)
	c := New(Config{Hasher: h})
	defer c.Close()
	write := []extract.Tag{{Op: extract.OpWrite, Table: "public.docs", ID: "1", Subjects: []string{"alice"}}}
	del := []extract.Tag{{Op: extract.OpDelete, Table: "public.docs", ID: "1"}}

	c.Hold(ledger.StorePostgres, Refusal{Code: CodeRestored, Message: "restored", Hint: "run lethe-proxy replay"})
	assert.True(t, c.Held(ledger.StorePostgres))
	_, r := c.Prepare(ledger.StorePostgres, write)
	require.NotNil(t, r)
	assert.Equal(t, CodeRestored, r.Code)
	assert.Equal(t, int64(1), c.Stats.Refused.Load())
	_, r = c.Prepare(ledger.StorePostgres, del)
	assert.Nil(t, r, "a delete adds no personal data")
	entries, r := c.Prepare(ledger.StorePinecone, write)
	assert.Nil(t, r, "another store is not held")
	assert.Len(t, entries, 1)

	assert.True(t, c.Release(ledger.StorePostgres))
	assert.False(t, c.Release(ledger.StorePostgres))
	_, r = c.Prepare(ledger.StorePostgres, write)
	assert.Nil(t, r)
}

// capture.on_restore: refuse holds the store's writes with LT006, logged
// once as an error; warn only logs, and writes pass.
func TestRestoreSeen_RefuseHoldsWarnOnlyLogs(t *testing.T) {
	h, err := ledger.NewHasher(make([]byte, 32))
	require.NoError(t, err)
	var logs bytes.Buffer
	c := New(Config{Hasher: h, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer c.Close()
	write := []extract.Tag{{Op: extract.OpWrite, Table: "idx/ns", ID: "1", Subjects: []string{"alice"}}}
	seen := Restore{Store: ledger.StorePinecone, Signal: "host changed", Happened: "an index was re-created",
		Writes: "index writes", Message: "lethe: restored", LogReason: "index restored"}

	c.RestoreSeen(seen, false)
	assert.False(t, c.Held(ledger.StorePinecone))
	_, r := c.Prepare(ledger.StorePinecone, write)
	assert.Nil(t, r, "warn relays writes")
	assert.Contains(t, logs.String(), "level=WARN msg=\"restore detection: an index was re-created")

	c.RestoreSeen(seen, true)
	c.RestoreSeen(seen, true)
	_, r = c.Prepare(ledger.StorePinecone, write)
	require.NotNil(t, r)
	assert.Equal(t, CodeRestored, r.Code)
	assert.Equal(t, "lethe: restored", r.Message)
	assert.Contains(t, r.Hint, "lethe-proxy replay")
	assert.Equal(t, 1, strings.Count(logs.String(), "level=ERROR"), "logged as an error once, not at every check")
}
