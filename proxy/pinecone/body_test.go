package pinecone_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pinecone"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// Request bodies held in memory are bounded across connections: clients
// that send their bodies slowly (or never finish) take the budget, the
// next request waits and is answered UNAVAILABLE once it has waited too
// long, and the budget is whole again once those clients leave.
func TestRelay_BodiesInMemoryAreBounded(t *testing.T) {
	upstream, _ := startEmulator(t, emulator.Config{}, nil)
	const limit = 100 << 10
	// Bodies are read into power-of-two buffers: a body at the limit
	// takes 128 KiB, a small one 4 KiB.
	const buffer = 128 << 10
	relay, err := pinecone.New(pinecone.Config{Indexes: []*pinecone.Index{index(t, "docs", upstream, nil)},
		MaxRequestBytes: limit, MaxBufferedBytes: 2*buffer + 2<<10, BufferWait: 300 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(relay.Close)
	base := serveOn(t, relay.Server(nil))
	addr := strings.TrimPrefix(base, "http://")

	// Two clients declare bodies at the limit and send only their headers.
	var stalled []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		stalled = append(stalled, c)
		_, err = fmt.Fprintf(c, "POST /vectors/upsert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", limit)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return relay.BufferedBytes() == 2*buffer }, 10*time.Second, 10*time.Millisecond,
		"the stalled bodies are charged before they are read: %d", relay.BufferedBytes())

	resp := restCall(t, http.DefaultClient, http.MethodPost, base+"/vectors/upsert", "", `{"vectors":[{"id":"a","values":[1]}]}`)
	assert.Equal(t, http.StatusServiceUnavailable, resp.status)
	code, msg := pineconeError(t, resp.body)
	assert.Equal(t, 14, code)
	assert.Contains(t, msg, "pinecone.max_buffered_size")

	for _, c := range stalled {
		c.Close()
	}
	require.Eventually(t, func() bool { return relay.BufferedBytes() == 0 }, 10*time.Second, 10*time.Millisecond)
	resp = restCall(t, http.DefaultClient, http.MethodPost, base+"/vectors/upsert", "", `{"vectors":[{"id":"a","values":[1]}]}`)
	assert.Equal(t, http.StatusOK, resp.status, "%s", resp.body)
	assert.Zero(t, relay.BufferedBytes(), "a finished request returns its charge")
}

// A body sent in chunks without a Content-Length grows its buffer, and
// its charge, as it arrives, up to the request limit.
func TestRelay_ChunkedBodyGrowsWithinTheLimit(t *testing.T) {
	upstream, rec := startEmulator(t, emulator.Config{}, nil)
	const limit = 100 << 10
	base := startRelay(t, pinecone.Config{Indexes: []*pinecone.Index{index(t, "docs", upstream, nil)}, MaxRequestBytes: limit}, nil)
	vectors := make([]string, 0, 2000)
	for i := range 2000 {
		vectors = append(vectors, fmt.Sprintf(`{"id":"v%d","values":[1]}`, i))
	}
	body := `{"vectors":[` + strings.Join(vectors, ",") + `]}`
	require.Greater(t, len(body), 32<<10)
	require.Less(t, len(body), limit)
	req, err := http.NewRequest(http.MethodPost, base+"/vectors/upsert", io.MultiReader(strings.NewReader(body)))
	require.NoError(t, err)
	req.ContentLength = -1 // chunked
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	require.Len(t, rec.all(), 1)

	big := body + strings.Repeat(" ", limit)
	req, err = http.NewRequest(http.MethodPost, base+"/vectors/upsert", io.MultiReader(strings.NewReader(big)))
	require.NoError(t, err)
	req.ContentLength = -1
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Len(t, rec.all(), 1, "nothing oversized reaches the upstream")
}
