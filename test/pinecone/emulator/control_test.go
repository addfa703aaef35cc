package emulator_test

import (
	"testing"

	"github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

// go-pinecone v5 given the emulator as its control plane parses its
// describe index and list indexes answers, and the host they give is the
// data plane the SDK can then write to.
func TestGoSDK_ControlPlaneDescribeAndListGiveTheHost(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{APIKey: testAPIKey, IndexName: "ctrl-docs", Dimension: 2}, nil)
	pc, err := pinecone.NewClient(pinecone.NewClientParams{ApiKey: testAPIKey, Host: url})
	require.NoError(t, err)
	ctx := sdktest.Context(t)

	described, err := pc.DescribeIndex(ctx, "ctrl-docs")
	require.NoError(t, err)
	assert.Equal(t, url, described.Host)
	assert.Equal(t, pinecone.Cosine, described.Metric)
	assert.EqualValues(t, 2, *described.Dimension)
	assert.True(t, described.Status.Ready)
	require.NotNil(t, described.Spec.Serverless)

	listed, err := pc.ListIndexes(ctx)
	require.NoError(t, err)
	require.Len(t, listed, 1)
	assert.Equal(t, "ctrl-docs", listed[0].Name)
	assert.Equal(t, url, listed[0].Host)

	_, err = pc.DescribeIndex(ctx, "missing")
	assert.ErrorContains(t, err, "NOT_FOUND")

	idx := sdktest.GoIndex(t, described.Host, testAPIKey, "n", nil)
	n, err := idx.UpsertVectors(ctx, []*pinecone.Vector{sdktest.Vec("v1", []float32{1, 0}, nil)})
	require.NoError(t, err)
	assert.EqualValues(t, 1, n)
}
