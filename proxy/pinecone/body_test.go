package pinecone_test

import (
	"bufio"
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

// bodyRelay is a relay over an emulator whose bodies are bounded to
// 100 KiB each (read into buffers of up to 128 KiB) and to two such
// buffers and a little more in all. Without a Hook in cfg, one that sees
// every body (seesAll).
func bodyRelay(t *testing.T, cfg pinecone.Config) (*pinecone.Relay, string) {
	t.Helper()
	if cfg.Hook == nil {
		cfg.Hook = seesAll{}
	}
	upstream, _ := startEmulator(t, emulator.Config{}, nil)
	cfg.Indexes = []*pinecone.Index{index(t, "docs", upstream, nil)}
	cfg.MaxRequestBytes = 100 << 10
	cfg.MaxBufferedBytes = 2*(128<<10) + 64<<10
	relay, err := pinecone.New(cfg)
	require.NoError(t, err)
	t.Cleanup(relay.Close)
	return relay, serveOn(t, relay.Server(nil))
}

// stall opens a connection that declares a body of declared bytes and
// sends the first sent of them, and leaves it open until the test ends.
func stall(t *testing.T, base string, declared, sent int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = fmt.Fprintf(c, "POST /vectors/upsert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		declared, strings.Repeat(" ", sent))
	require.NoError(t, err)
	return c
}

// Clients that declare large bodies and send nothing hold only the first
// 4 KiB step each, not what they declared: a normal write goes through
// at once.
func TestRelay_StalledBodiesDoNotHoldTheBudget(t *testing.T) {
	relay, base := bodyRelay(t, pinecone.Config{BufferWait: 300 * time.Millisecond})
	const clients = 32
	for range clients {
		stall(t, base, 100<<10, 0)
	}
	require.Eventually(t, func() bool { return relay.BufferedBytes() == clients*4<<10 }, 10*time.Second, 10*time.Millisecond,
		"each stalled body holds 4 KiB: %d", relay.BufferedBytes())
	resp := restCall(t, http.DefaultClient, http.MethodPost, base+"/vectors/upsert", "", `{"vectors":[{"id":"a","values":[1]}]}`)
	assert.Equal(t, http.StatusOK, resp.status, "%s", resp.body)
}

// Request bodies held in memory are bounded across connections by what
// has arrived: clients that sent most of a large body take the budget,
// the next request waits and is answered UNAVAILABLE once it has waited
// too long, and the budget is whole again once those clients leave.
func TestRelay_BodiesInMemoryAreBounded(t *testing.T) {
	relay, base := bodyRelay(t, pinecone.Config{BufferWait: 300 * time.Millisecond})
	var stalled []net.Conn
	for range 2 {
		stalled = append(stalled, stall(t, base, 100<<10, 100<<10-1))
	}
	require.Eventually(t, func() bool { return relay.BufferedBytes() == 2*128<<10 }, 10*time.Second, 10*time.Millisecond,
		"the bodies that arrived are charged: %d", relay.BufferedBytes())

	resp := restCall(t, http.DefaultClient, http.MethodPost, base+"/vectors/upsert", "", `{"vectors":[{"id":"a","values":[1]}]}`+strings.Repeat(" ", 70<<10))
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

// A body that does not arrive within the body timeout is answered 408 /
// DEADLINE_EXCEEDED (REST) or grpc-status 4, is not forwarded, and
// returns its share of the budget.
func TestRelay_StalledBodyTimesOutAndFreesItsShare(t *testing.T) {
	relay, base := bodyRelay(t, pinecone.Config{BodyTimeout: 200 * time.Millisecond})
	c := stall(t, base, 100<<10, 70<<10)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	code, msg := pineconeError(t, string(b))
	assert.Equal(t, 4, code)
	assert.Contains(t, msg, "pinecone.body_timeout")
	require.Eventually(t, func() bool { return relay.BufferedBytes() == 0 }, 10*time.Second, 10*time.Millisecond)

	// gRPC over h2c: a message prefix declaring 90 KiB, then nothing.
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	go pw.Write([]byte{0, 0, 1, 0x68, 0, 0x0a})
	req, err := http.NewRequest(http.MethodPost, base+"/VectorService/Upsert", pr)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/grpc")
	var h2c http.Protocols
	h2c.SetUnencryptedHTTP2(true)
	gresp, err := (&http.Client{Transport: &http.Transport{Protocols: &h2c}}).Do(req)
	require.NoError(t, err)
	io.Copy(io.Discard, gresp.Body)
	gresp.Body.Close()
	assert.Equal(t, "4", gresp.Header.Get("Grpc-Status")+gresp.Trailer.Get("Grpc-Status"))
	require.Eventually(t, func() bool { return relay.BufferedBytes() == 0 }, 10*time.Second, 10*time.Millisecond)
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
	assert.Len(t, rec.all(), 1, "no oversized request reaches the upstream whole")
}
