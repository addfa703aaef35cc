package walfollow

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A slot no proxy streams is reported, after the grace, instead of being
// waited for until the caller's deadline.
func TestAwaitFollowed_ASlotNobodyStreamsIsNotFollowed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, testConnString(t))
	require.NoError(t, err)
	slot := fmt.Sprintf("wcli_await_%d", os.Getpid())
	// Dropped before the connection closes: a slot left behind keeps the
	// test cluster's WAL from being recycled.
	t.Cleanup(func() {
		_, err := conn.Exec(context.Background(), "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1", slot)
		assert.NoError(t, err, "dropping the test's slot")
		conn.Close(context.Background())
	})
	_, err = conn.Exec(ctx, "SELECT pg_create_logical_replication_slot($1, 'pgoutput')", slot)
	require.NoError(t, err)

	err = AwaitFollowed(ctx, conn, slot, nil, 100*time.Millisecond)
	require.ErrorIs(t, err, ErrNotFollowed)
	require.NoError(t, ctx.Err(), "returned at the grace, not the deadline")
}
