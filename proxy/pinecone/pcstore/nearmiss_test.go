package pcstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

// NearMisses counts the records naming one of the spellings it is given,
// each once, in every namespace of the layer, and never the subject's own.
func TestLayer_NearMissesCountTheRecordsNamingAVariant(t *testing.T) {
	ti := startIndex(t, emulator.Config{}, false, time.Minute)
	ti.upsert(t, "docs",
		rec(t, "b1", []float32{1, 0, 0}, map[string]any{"user_id": "bob@example.com"}),
		rec(t, "b2", []float32{0, 1, 0}, map[string]any{"participants": []any{"carol", "bob@example.com"}}),
		rec(t, "b3", []float32{0, 0, 1}, map[string]any{"user_id": "bob@example.com", "participants": []any{"BOB@EXAMPLE.COM"}}),
		rec(t, "exact", []float32{1, 1, 0}, map[string]any{"user_id": "Bob@Example.com"}),
		rec(t, "c1", []float32{0, 1, 1}, map[string]any{"user_id": "carol"}),
	)
	ti.upsert(t, "other", rec(t, "o1", []float32{1, 0, 0}, map[string]any{"user_id": "bob@example.com"}))
	ctx := sdktest.Context(t)
	variants := []string{"bob@example.com", "BOB@EXAMPLE.COM"}
	fields := []string{"user_id", "participants"}

	docs := ti.layers(t, Rule{Namespace: "docs", Fields: fields})[0]
	n, err := docs.NearMisses(ctx, "Bob@Example.com", variants)
	require.NoError(t, err)
	assert.EqualValues(t, 3, n, "b1, b2 and b3 (once, though two variants name it); not the exact match, not carol's, not another namespace's")

	all := ti.layers(t, Rule{Namespace: "*", Fields: fields})[0]
	n, err = all.NearMisses(ctx, "Bob@Example.com", variants)
	require.NoError(t, err)
	assert.EqualValues(t, 4, n, "every namespace of a \"*\" rule")

	n, err = docs.NearMisses(ctx, "42", nil)
	require.NoError(t, err)
	assert.Zero(t, n, "no variant, nothing to look for")
}
