package pinecone_test

import (
	"bufio"
	"bytes"
	"context"
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
)

// sendGRPC starts a gRPC upsert named name with body read from r, under
// ctx, and returns a channel that gets "grpc-status <code>" or the
// client's error.
func sendGRPC(ctx context.Context, t *testing.T, base, name string, r io.Reader) <-chan string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/VectorService/Upsert", r)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("X-Test", name)
	answer := make(chan string, 1)
	go func() {
		resp, err := h2cClient().Do(req)
		if err != nil {
			answer <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		answer <- "grpc-status " + resp.Header.Get("Grpc-Status") + resp.Trailer.Get("Grpc-Status")
	}()
	return answer
}

// heldShort waits until the upstream's request named name has ended and
// requires that it got exactly want, never the whole body.
func heldShort(t *testing.T, upstream *tap, name string, want []byte) {
	t.Helper()
	waitFor(t, func() bool { rec, _ := upstream.get(name); return rec.ended }, "the upstream's request %q ends", name)
	rec, _ := upstream.get(name)
	assert.False(t, rec.whole, "%s: the upstream never had the body whole", name)
	assert.Equal(t, want, append([]byte{}, rec.received...), "%s: the upstream got the forwardable part, nothing of the tail", name)
}

// A gRPC client that abandons its call — END_STREAM withheld after the
// whole message, RST_STREAM mid-body, RST_STREAM right after the last
// byte — leaves the upstream's request cut short before the message's
// last byte, the Hook unasked, and the charge returned.
func TestAttack_Stream_AbandonedGRPCCallsNeverReachTheUpstreamWhole(t *testing.T) {
	body := grpcUpsert("a", 4000)
	for _, abandon := range []string{"END_STREAM withheld", "RST_STREAM mid-body", "RST_STREAM after the last byte"} {
		t.Run(abandon, func(t *testing.T) {
			upstream := newTap(nil)
			hook := &countingHook{}
			relay, base := tapRelay(t, upstream, pinecone.Config{Hook: hook, BodyTimeout: 300 * time.Millisecond})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pr, pw := io.Pipe()
			t.Cleanup(func() { pw.CloseWithError(io.ErrClosedPipe) })
			answer := sendGRPC(ctx, t, base, "abandoned", pr)
			sent := body
			if abandon == "RST_STREAM mid-body" {
				sent = body[:len(body)/2]
			}
			go dribble(pw, sent, false)
			// The last byte that arrived is held, whether or not it ends
			// the message.
			open := len(sent) - 1
			waitFor(t, func() bool {
				rec, _ := upstream.get("abandoned")
				return len(rec.received) == open
			}, "the upstream gets what was sent but the held last byte")
			if abandon == "END_STREAM withheld" {
				assert.Equal(t, "grpc-status 4", <-answer, "the body timeout answers")
			} else {
				cancel()
				assert.Contains(t, <-answer, "error: ")
			}
			heldShort(t, upstream, "abandoned", sent[:open])
			assert.Zero(t, hook.calls.Load(), "the Hook was not asked about a body that never ended")
			waitFor(t, func() bool { return relay.BufferedBytes() == 0 }, "the charge is returned")
		})
	}
}

// A client that resets its call right after END_STREAM, while the Hook
// decides: the refusal still aborts the upstream's request before the
// message's last byte.
func TestAttack_Stream_ResetAfterTheEndWhileTheHookDecidesIsStillRefused(t *testing.T) {
	upstream := newTap(nil)
	hook := newWaitingHook(t, true)
	relay, base := tapRelay(t, upstream, pinecone.Config{Hook: hook})
	body := grpcUpsert("a", 4000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	answer := sendGRPC(ctx, t, base, "reset", bytes.NewReader(body))
	waitFor(t, func() bool { rec, _ := upstream.get("reset"); return len(rec.received) == len(body)-1 }, "the upstream gets all but the last byte")
	cancel()
	assert.Contains(t, <-answer, "error: ")
	close(hook.proceed)
	heldShort(t, upstream, "reset", body[:len(body)-1])
	waitFor(t, func() bool { return relay.BufferedBytes() == 0 }, "the charge is returned")
}

// A REST client that declares more than it sends and closes, or stalls
// before its body's last byte (the JSON complete, the HTTP body not) until
// the body timeout, leaves the upstream's request short of the closing
// byte, the Hook unasked; the stalled one is answered 408.
func TestAttack_Stream_AbandonedRESTBodiesNeverReachTheUpstreamWhole(t *testing.T) {
	body := restUpsert("a", 3000) // ends "} \r\n"
	closing := bytes.LastIndexByte(body, '}')
	for _, abandon := range []string{"declares more and closes", "stalls before the last byte"} {
		t.Run(abandon, func(t *testing.T) {
			upstream := newTap(nil)
			hook := &countingHook{}
			relay, base := tapRelay(t, upstream, pinecone.Config{Hook: hook, BodyTimeout: 300 * time.Millisecond})
			declared, sent := len(body)+10, body
			if abandon == "stalls before the last byte" {
				declared, sent = len(body), body[:len(body)-1]
			}
			conn := rawPost(t, base, "abandoned", declared, sent)
			waitFor(t, func() bool { rec, _ := upstream.get("abandoned"); return len(rec.received) == closing },
				"the upstream gets all but the closing byte and what follows it")
			if abandon == "declares more and closes" {
				conn.Close()
			} else {
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				require.NoError(t, err)
				resp.Body.Close()
				assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
			}
			heldShort(t, upstream, "abandoned", body[:closing])
			assert.Zero(t, hook.calls.Load(), "the Hook was not asked about a body that never ended")
			waitFor(t, func() bool { return relay.BufferedBytes() == 0 }, "the charge is returned")
		})
	}
}

// rawRequest is an HTTP/1.1 upsert named name with body and extra header
// lines, as a client writes it.
func rawRequest(name string, body []byte, extra ...string) []byte {
	head := fmt.Sprintf("POST /vectors/upsert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Test: %s\r\nContent-Length: %d\r\n", name, len(body))
	for _, h := range extra {
		head += h + "\r\n"
	}
	return append([]byte(head+"\r\n"), body...)
}

// Expect: 100-continue: the client sends its body once the relay asks
// for it; the accepted body reaches the upstream whole, the refused one
// never does, and each is answered as before.
func TestAttack_Stream_ExpectContinue(t *testing.T) {
	upstream := newTap(nil)
	relay, base := tapRelay(t, upstream, pinecone.Config{Hook: &refusingHook{}})
	for _, name := range []string{"accepted", "forbidden"} {
		body := restUpsert(name, 500)
		conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		require.NoError(t, err)
		defer conn.Close()
		request := rawRequest(name, body, "Expect: 100-continue")
		head := bytes.Index(request, []byte("\r\n\r\n")) + 4
		_, err = conn.Write(request[:head])
		require.NoError(t, err)
		reader := bufio.NewReader(conn)
		line, err := reader.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "HTTP/1.1 100 Continue\r\n", line, "the relay asks for the body")
		_, err = reader.ReadString('\n')
		require.NoError(t, err)
		_, err = conn.Write(request[head:])
		require.NoError(t, err)
		resp := finalResponse(t, reader)
		if name == "accepted" {
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			waitFor(t, func() bool { rec, _ := upstream.get(name); return rec.ended }, "the upstream's request ends")
			rec, _ := upstream.get(name)
			assert.True(t, rec.whole)
			assert.Equal(t, body, rec.received)
		} else {
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			refusedNeverWhole(t, upstream, name)
		}
	}
	waitFor(t, func() bool { return relay.BufferedBytes() == 0 }, "the charges are returned")
}

// finalResponse reads responses from reader up to the first that is not
// 1xx, as a client does: the upstream's own 100 Continue is relayed too.
func finalResponse(t *testing.T, reader *bufio.Reader) *http.Response {
	t.Helper()
	for {
		resp, err := http.ReadResponse(reader, nil)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 200 {
			return resp
		}
	}
}

// refusedNeverWhole requires that the refused REST request named name,
// if it reached the upstream at all, ended there short of its body's end
// and of any whole JSON value.
func refusedNeverWhole(t *testing.T, upstream *tap, name string) {
	t.Helper()
	if _, ok := upstream.get(name); !ok {
		return
	}
	waitFor(t, func() bool { rec, _ := upstream.get(name); return rec.ended }, "the upstream's request %q ends", name)
	rec, _ := upstream.get(name)
	assert.False(t, rec.whole, "%s: the upstream never had the body whole", name)
	assert.False(t, actedOn(rec.received, false), "%s: nothing the upstream got can be acted on", name)
}

// HTTP/1.1 pipelining: a refused request and an accepted one written in
// one go on one connection are answered in order (400, then 200); the
// refused one never reaches the upstream whole, the accepted one does,
// byte for byte.
func TestAttack_Stream_PipelinedRequestsAreAnsweredInOrder(t *testing.T) {
	upstream := newTap(nil)
	relay, base := tapRelay(t, upstream, pinecone.Config{Hook: &refusingHook{}})
	refused, accepted := restUpsert("forbidden", 2000), restUpsert("b", 2000)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write(append(rawRequest("first", refused), rawRequest("second", accepted)...))
	require.NoError(t, err)
	reader := bufio.NewReader(conn)
	for _, want := range []int{http.StatusBadRequest, http.StatusOK} {
		resp, err := http.ReadResponse(reader, nil)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, want, resp.StatusCode)
	}
	waitFor(t, func() bool { rec, _ := upstream.get("second"); return rec.ended }, "the second request ends upstream")
	second, _ := upstream.get("second")
	assert.True(t, second.whole)
	assert.Equal(t, accepted, second.received)
	refusedNeverWhole(t, upstream, "first")
	waitFor(t, func() bool { return relay.BufferedBytes() == 0 }, "the charges are returned")
}
