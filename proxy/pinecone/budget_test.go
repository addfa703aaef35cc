package pinecone

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bodies that each took part of what they need never wait for each other:
// 24 bodies of 128 KiB take, without waiting, what steps of their first
// 16 KiB the budget grants (a budget that grants every step would let 20
// of them hold all 320 KiB), then each grows to its whole size and
// finishes. Every one of them gets there, and the budget is never
// exceeded.
func TestBodyBudget_BodiesHoldingPartOfWhatTheyNeedDoNotWaitForEachOther(t *testing.T) {
	const size, most = 320 << 10, 128 << 10
	b := newBodyBudget(size, time.Minute)
	noWait, cancel := context.WithCancel(context.Background())
	cancel()
	shares := make([]*bodyShare, 24)
	for i := range shares {
		shares[i] = &bodyShare{index: -1}
	}
	for _, step := range []int64{4 << 10, 4 << 10, 8 << 10} {
		for _, s := range shares {
			if err := b.acquire(noWait, s, step, most); err != nil {
				require.ErrorIs(t, err, context.Canceled)
			}
			require.LessOrEqual(t, b.charged.Load(), int64(size))
		}
	}
	var largest int64
	for _, s := range shares {
		largest = max(largest, s.held)
	}
	assert.LessOrEqual(t, most-largest, size-b.charged.Load(), "the steps taken leave room for one body to finish")

	ctx, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	var wg sync.WaitGroup
	errs := make([]error, len(shares))
	for i, s := range shares {
		wg.Go(func() {
			b.mu.Lock()
			rest := most - s.held
			b.mu.Unlock()
			errs[i] = b.acquire(ctx, s, rest, most)
			b.release(s)
		})
	}
	wg.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "body %d", i)
	}
	assert.Zero(t, b.charged.Load())
	assert.Empty(t, b.shares)
}

// A step that could never fit (more than the budget) waits until its
// context ends, and takes nothing.
func TestBodyBudget_AStepOverTheBudgetWaitsAndTakesNothing(t *testing.T) {
	b := newBodyBudget(64<<10, time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	s := &bodyShare{index: -1}
	require.ErrorIs(t, b.acquire(ctx, s, 128<<10, 128<<10), context.DeadlineExceeded)
	assert.Zero(t, b.charged.Load())
	b.release(s)
	assert.Empty(t, b.shares)
}
