package pinecone_test

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pinecone"
)

// screeningHook is a Screener that wants no request, and counts the
// calls of Request it should never get.
type screeningHook struct{ calls atomic.Int32 }

func (h *screeningHook) Wants(*pinecone.Index, *http.Request) bool { return false }

func (h *screeningHook) Request(*pinecone.Index, *http.Request, []byte) (pinecone.Call, error) {
	h.calls.Add(1)
	return nil, nil
}

// A body the Hook does not want goes upstream as a plain reverse proxy
// sends it: all of it as it arrives, its tail included, with nothing read
// into the relay's memory, and the Hook is not asked.
func TestRelay_PassesABodyTheHookDoesNotWantAsItArrives(t *testing.T) {
	for _, c := range streamCases() {
		t.Run(c.name, func(t *testing.T) {
			upstream := newTap(nil)
			hook := &screeningHook{}
			relay, base := tapRelay(t, upstream, pinecone.Config{Hook: hook})
			body := c.body("a")
			pr, pw := io.Pipe()
			t.Cleanup(func() { pw.CloseWithError(io.ErrClosedPipe) })
			answer := c.send(t, base, c.name, pr)
			_, err := pw.Write(body)
			require.NoError(t, err)
			waitFor(t, func() bool {
				rec, _ := upstream.get(c.name)
				return len(rec.received) == len(body)
			}, "the upstream gets the whole body, its tail included, before the client ends it")
			assert.Zero(t, relay.BufferedBytes(), "the relay holds none of the body")
			require.NoError(t, pw.Close())
			assert.Contains(t, []string{"200 OK", "grpc-status 0"}, <-answer)
			rec, _ := upstream.get(c.name)
			assert.True(t, rec.whole)
			assert.Zero(t, hook.calls.Load(), "the Hook is not asked about a request it does not want")
		})
	}
}

// A relay without a Hook passes every body, and still cuts one over the
// limit short: the client is answered RESOURCE_EXHAUSTED (413), and the
// upstream never has the body whole.
func TestRelay_PassingBodyOverTheLimitIsCutShort(t *testing.T) {
	for _, c := range streamCases() {
		t.Run(c.name, func(t *testing.T) {
			upstream := newTap(nil)
			relay, base := bareTapRelay(t, upstream, pinecone.Config{MaxRequestBytes: 20 << 10})
			body := c.body("a")
			require.Greater(t, len(body), 20<<10)
			pr, pw := io.Pipe()
			t.Cleanup(func() { pw.CloseWithError(io.ErrClosedPipe) })
			answer := c.send(t, base, c.name, pr) // no Content-Length
			_, err := pw.Write(body[:10<<10])
			require.NoError(t, err)
			waitFor(t, func() bool { rec, _ := upstream.get(c.name); return len(rec.received) == 10<<10 }, "the body goes upstream")
			go func() { pw.Write(body[10<<10:]); pw.Close() }()
			assert.Contains(t, []string{"413 Request Entity Too Large", "grpc-status 8"}, <-answer)
			cutShort(t, upstream, c.name)
			rec, _ := upstream.get(c.name)
			assert.LessOrEqual(t, len(rec.received), 20<<10)
			assert.Zero(t, relay.BufferedBytes())
		})
	}
}

// A passing body that stops arriving is answered DEADLINE_EXCEEDED (408)
// at the body timeout, and the upstream never has it whole.
func TestRelay_PassingBodyTooSlowIsAnsweredAtTheBodyTimeout(t *testing.T) {
	for _, c := range streamCases() {
		t.Run(c.name, func(t *testing.T) {
			upstream := newTap(nil)
			_, base := bareTapRelay(t, upstream, pinecone.Config{BodyTimeout: 300 * time.Millisecond})
			body := c.body("a")
			pr, pw := io.Pipe()
			t.Cleanup(func() { pw.CloseWithError(io.ErrClosedPipe) })
			answer := c.send(t, base, c.name, pr)
			_, err := pw.Write(body[:len(body)/2])
			require.NoError(t, err)
			got := <-answer
			assert.True(t, got == "grpc-status 4" || strings.HasPrefix(got, "408"), "answer %q", got)
			cutShort(t, upstream, c.name)
		})
	}
}

// bareTapRelay is tapRelay with cfg's Hook as it is: nil stays nil.
func bareTapRelay(t *testing.T, upstream http.Handler, cfg pinecone.Config) (*pinecone.Relay, string) {
	t.Helper()
	cfg.Indexes = []*pinecone.Index{index(t, "docs", serveHTTP(t, upstream, nil), nil)}
	relay, err := pinecone.New(cfg)
	require.NoError(t, err)
	t.Cleanup(relay.Close)
	return relay, serveOn(t, relay.Server(nil))
}
