package capture

import (
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
