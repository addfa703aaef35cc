package pinecone_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pinecone"
)

// limitedTapRelay is a relay in front of a tap whose bodies are bounded to
// 100 KiB each and to two 128 KiB buffers and 64 KiB more in all.
func limitedTapRelay(t *testing.T, cfg pinecone.Config) (*tap, *pinecone.Relay, string) {
	t.Helper()
	upstream := newTap(nil)
	cfg.MaxRequestBytes = 100 << 10
	cfg.MaxBufferedBytes = 2*(128<<10) + 64<<10
	relay, base := tapRelay(t, upstream, cfg)
	return upstream, relay, base
}

// rawPost opens an HTTP/1.1 connection, sends the headers of a REST upsert
// named name declaring a body of declared bytes, then content, and leaves
// the connection open until the test ends.
func rawPost(t *testing.T, base, name string, declared int, content []byte) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = fmt.Fprintf(c, "POST /vectors/upsert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Test: %s\r\nContent-Length: %d\r\n\r\n%s",
		name, declared, content)
	require.NoError(t, err)
	return c
}

// cutShort waits until the upstream's request named name has ended, and
// requires that it got some of the body, never the whole.
func cutShort(t *testing.T, upstream *tap, name string) {
	t.Helper()
	waitFor(t, func() bool { rec, _ := upstream.get(name); return rec.ended }, "the upstream's request %q ends", name)
	rec, _ := upstream.get(name)
	assert.NotEmpty(t, rec.received, "%s: the body went upstream as it arrived", name)
	assert.False(t, rec.whole, "%s: the upstream never got the whole body", name)
}

// A body sent in chunks past the limit is answered 413 as before it was
// forwarded while it arrived: the upstream's request breaks off, and the
// body's charge is returned.
func TestRelay_ChunkedBodyOverTheLimitIsCutShort(t *testing.T) {
	upstream, relay, base := limitedTapRelay(t, pinecone.Config{})
	body := restUpsert("a", 20000)
	require.Greater(t, len(body), 100<<10)
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	answer := streamCases()[0].send(t, base, "big", pr) // no Content-Length: chunked
	go pw.Write(body[:50<<10])
	waitFor(t, func() bool { rec, _ := upstream.get("big"); return len(rec.received) > 0 }, "the body goes upstream")
	go func() {
		pw.Write(body[50<<10:])
		pw.Close()
	}()
	assert.Equal(t, "413 Request Entity Too Large", <-answer)
	cutShort(t, upstream, "big")
	waitFor(t, func() bool { return relay.BufferedBytes() == 0 }, "the charge is returned")
}

// A gRPC body whose first message declares more than the limit goes
// nowhere before it is whole: at the limit it is refused
// RESOURCE_EXHAUSTED, and the upstream never saw the request.
func TestRelay_GRPCMessageDeclaredOverTheLimitIsNotForwarded(t *testing.T) {
	upstream, relay, base := limitedTapRelay(t, pinecone.Config{})
	body := make([]byte, 5+120<<10)
	binary.BigEndian.PutUint32(body[1:], 120<<10)
	c := streamCases()[1]
	assert.Equal(t, "grpc-status 8", <-c.send(t, base, "big", bytes.NewReader(body)))
	assert.Zero(t, upstream.count(), "nothing reached the upstream")
	waitFor(t, func() bool { return relay.BufferedBytes() == 0 }, "the charge is returned")
}

// A body that stops arriving is answered DEADLINE_EXCEEDED (408 / gRPC 4)
// once the body timeout passes; what went upstream breaks off.
func TestRelay_StalledBodyIsCutShortAtTheTimeout(t *testing.T) {
	upstream, relay, base := limitedTapRelay(t, pinecone.Config{BodyTimeout: 300 * time.Millisecond})
	content := restUpsert("a", 14000)[:70<<10]
	conn := rawPost(t, base, "rest", 100<<10, content)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	code, msg := pineconeError(t, string(b))
	assert.Equal(t, 4, code)
	assert.Contains(t, msg, "pinecone.body_timeout")
	cutShort(t, upstream, "rest")

	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	answer := streamCases()[1].send(t, base, "grpc", pr)
	frame := grpcUpsert("a", 20000)[:50<<10]
	_, err = pw.Write(frame)
	require.NoError(t, err)
	assert.Equal(t, "grpc-status 4", <-answer)
	cutShort(t, upstream, "grpc")
	waitFor(t, func() bool { return relay.BufferedBytes() == 0 }, "the charges are returned")
}

// A body that waits too long for room in the budget is answered
// UNAVAILABLE; what went upstream breaks off.
func TestRelay_BodyWaitingForTheBudgetIsCutShort(t *testing.T) {
	upstream, relay, base := limitedTapRelay(t, pinecone.Config{BufferWait: 300 * time.Millisecond})
	var stalled []net.Conn
	for i := range 2 {
		stalled = append(stalled, rawPost(t, base, fmt.Sprintf("stalled%d", i), 100<<10, restUpsert("a", 20000)[:100<<10-1]))
	}
	waitFor(t, func() bool { return relay.BufferedBytes() == 2*128<<10 }, "the stalled bodies are charged")

	body := restUpsert("c", 12000)
	require.Greater(t, len(body), 64<<10)
	assert.Equal(t, "503 Service Unavailable", <-streamCases()[0].send(t, base, "third", bytes.NewReader(body)))
	cutShort(t, upstream, "third")
	for _, c := range stalled {
		c.Close()
	}
	waitFor(t, func() bool { return relay.BufferedBytes() == 0 }, "the charges are returned")
}

// A client that goes away mid-body leaves the upstream's request cut
// short and returns its charge.
func TestRelay_ClientGoneMidBodyIsCutShort(t *testing.T) {
	upstream, relay, base := limitedTapRelay(t, pinecone.Config{})
	conn := rawPost(t, base, "gone", 100<<10, restUpsert("a", 14000)[:50<<10])
	waitFor(t, func() bool { rec, _ := upstream.get("gone"); return len(rec.received) > 0 }, "the body goes upstream")
	conn.Close()
	cutShort(t, upstream, "gone")
	waitFor(t, func() bool { return relay.BufferedBytes() == 0 }, "the charge is returned")
}

// countingHook accepts every request and counts them.
type countingHook struct{ calls atomic.Int32 }

func (h *countingHook) Request(*pinecone.Index, *http.Request, []byte) (pinecone.Call, error) {
	h.calls.Add(1)
	return nil, nil
}

// An upstream that answers while the body is still arriving (a wrong API
// key refused before the body is read, trailers-only) is relayed without
// waiting for the rest of the body, and the Hook is not asked: the
// upstream never had the whole request, so there is nothing to record.
func TestRelay_EarlyAnswerIsRelayedWithoutAskingTheHook(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Grpc-Status", "16")
		w.WriteHeader(http.StatusOK)
	})
	hook := &countingHook{}
	relay, base := tapRelay(t, upstream, pinecone.Config{Hook: hook})
	body := grpcUpsert("a", 8000)
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.CloseWithError(io.ErrClosedPipe) })
	answer := streamCases()[1].send(t, base, "early", pr)
	go pw.Write(body[:len(body)/2])
	select {
	case got := <-answer:
		assert.Equal(t, "grpc-status 16", got)
	case <-time.After(10 * time.Second):
		t.Fatal("no answer while the body is still being sent")
	}
	pw.CloseWithError(io.ErrClosedPipe)
	waitFor(t, func() bool { return relay.BufferedBytes() == 0 }, "the request is over")
	assert.Zero(t, hook.calls.Load(), "the Hook was not asked")
}

type panickingHook struct{}

func (panickingHook) Request(*pinecone.Index, *http.Request, []byte) (pinecone.Call, error) {
	panic("hook bug")
}

// A Hook that panics on a request with a body (run beside the handler,
// not in it) is answered INTERNAL, and the relay serves on.
func TestRelay_PanickingHookIsAnsweredInternal(t *testing.T) {
	upstream := newTap(nil)
	relay, base := tapRelay(t, upstream, pinecone.Config{Hook: panickingHook{}})
	resp := restCall(t, http.DefaultClient, http.MethodPost, base+"/vectors/upsert", "", `{"vectors":[]}`)
	assert.Equal(t, http.StatusInternalServerError, resp.status)
	code, _ := pineconeError(t, resp.body)
	assert.Equal(t, 13, code)
	resp = restCall(t, http.DefaultClient, http.MethodPost, base+"/vectors/upsert", "", `{"vectors":[]}`)
	assert.Equal(t, http.StatusInternalServerError, resp.status, "the relay still serves")
	waitFor(t, func() bool { return relay.BufferedBytes() == 0 }, "the charges are returned")
}

// recordingCall records how its request ended.
type recordingCall struct {
	mu      sync.Mutex
	outcome []string
}

func (c *recordingCall) Response(resp *http.Response) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outcome = append(c.outcome, "response grpc-status "+resp.Header.Get("Grpc-Status"))
	return nil
}

func (c *recordingCall) Unreachable(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outcome = append(c.outcome, "unreachable: "+err.Error())
}

// answerHook accepts a request once the upstream has answered it,
// following it with call; deciding is closed when it is called.
type answerHook struct {
	deciding chan struct{}
	answered <-chan struct{}
	call     *recordingCall
}

func (h *answerHook) Request(*pinecone.Index, *http.Request, []byte) (pinecone.Call, error) {
	close(h.deciding)
	<-h.answered
	// The relay receives the answer while the Hook is still deciding
	// (the pause only makes that likely; the test passes either way
	// when the relay waits for the decision).
	time.Sleep(200 * time.Millisecond)
	return h.call, nil
}

// An answer that arrives while the Hook is deciding (an upstream that
// refuses a wrong API key before reading the body) waits for the decision
// and settles the Call with it, so an intent made meanwhile is settled by
// the answer, not left pending.
func TestRelay_AnswerWhileTheHookDecidesSettlesTheCall(t *testing.T) {
	answered := make(chan struct{})
	hook := &answerHook{deciding: make(chan struct{}), answered: answered, call: &recordingCall{}}
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-hook.deciding // the body is whole and the Hook is deciding
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Grpc-Status", "16")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		close(answered)
	})
	_, base := tapRelay(t, upstream, pinecone.Config{Hook: hook})
	assert.Equal(t, "grpc-status 16", <-streamCases()[1].send(t, base, "early", bytes.NewReader(grpcUpsert("a", 10))))
	hook.call.mu.Lock()
	defer hook.call.mu.Unlock()
	assert.Equal(t, []string{"response grpc-status 16"}, hook.call.outcome)
}
