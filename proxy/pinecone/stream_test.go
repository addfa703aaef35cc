package pinecone_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pinecone"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// restUpsert is a REST upsert of the vector id with dims values, followed
// by trailing whitespace as some clients send it.
func restUpsert(id string, dims int) []byte {
	values := make([]string, dims)
	for i := range values {
		values[i] = fmt.Sprintf("%.4f", float64(i%97)/97)
	}
	return fmt.Appendf(nil, `{"namespace":"n","vectors":[{"id":%q,"values":[%s]}]}`+" \r\n", id, strings.Join(values, ","))
}

// grpcUpsert is a gRPC UpsertRequest{vectors: [Vector{id, values: dims
// floats}], namespace: "n"} framed as one uncompressed message.
func grpcUpsert(id string, dims int) []byte {
	values := make([]byte, 0, 4*dims)
	for i := range dims {
		values = binary.LittleEndian.AppendUint32(values, math.Float32bits(float32(i%97)/97))
	}
	vec := protoBytes(nil, 1, []byte(id))
	vec = protoBytes(vec, 2, values)
	msg := protoBytes(nil, 1, vec)
	msg = protoBytes(msg, 2, []byte("n"))
	frame := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(frame[1:], uint32(len(msg)))
	return append(frame, msg...)
}

// protoBytes appends field as a length-delimited protobuf field.
func protoBytes(b []byte, field int, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func h2cClient() *http.Client {
	var h2c http.Protocols
	h2c.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &h2c}}
}

// streamCase is one protocol's request: its path, content type, client,
// and how much of a body may go upstream before the Hook decided.
type streamCase struct {
	name, path, contentType string
	client                  *http.Client
	body                    func(id string) []byte
	// open is the length of the part of body that may go upstream
	// before the Hook has decided on the whole: gRPC all but the last
	// byte; REST everything before the last non-whitespace byte (the
	// closing brace of a whole body).
	open func(body []byte) int
}

func streamCases() []streamCase {
	return []streamCase{
		{
			name: "rest", path: "/vectors/upsert", contentType: "application/json", client: http.DefaultClient,
			body: func(id string) []byte { return restUpsert(id, 4000) },
			open: func(body []byte) int { return len(bytes.TrimRight(body, " \t\r\n")) - 1 },
		},
		{
			name: "grpc", path: "/VectorService/Upsert", contentType: "application/grpc", client: h2cClient(),
			body: func(id string) []byte { return grpcUpsert(id, 8000) },
			open: func(body []byte) int { return len(body) - 1 },
		},
	}
}

// send starts a request of body read from r and returns a channel that
// gets its answer: REST status, or gRPC "grpc-status <code>".
func (c streamCase) send(t *testing.T, base, name string, r io.Reader) <-chan string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+c.path, r)
	require.NoError(t, err)
	req.Header.Set("Content-Type", c.contentType)
	req.Header.Set("X-Test", name)
	answer := make(chan string, 1)
	go func() {
		resp, err := c.client.Do(req)
		if err != nil {
			answer <- err.Error()
			return
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		if c.contentType == "application/grpc" {
			answer <- "grpc-status " + resp.Header.Get("Grpc-Status") + resp.Trailer.Get("Grpc-Status")
			return
		}
		answer <- resp.Status
	}()
	return answer
}

// waitFor fails the test unless cond holds within 10 s.
func waitFor(t *testing.T, cond func() bool, what string, args ...any) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 5*time.Millisecond, append([]any{what}, args...)...)
}

// The upstream receives a body's first bytes while the client is still
// sending the rest: the client sends half, waits until the upstream has
// all of that half the relay may forward, then sends the rest.
func TestRelay_ForwardsTheBodyWhileItArrives(t *testing.T) {
	for _, c := range streamCases() {
		t.Run(c.name, func(t *testing.T) {
			upstream := newTap(nil)
			_, base := tapRelay(t, upstream, pinecone.Config{})
			body := c.body("a")
			half := len(body) / 2
			pr, pw := io.Pipe()
			t.Cleanup(func() { pw.CloseWithError(io.ErrClosedPipe) })
			answer := c.send(t, base, c.name, pr)
			_, err := pw.Write(body[:half])
			require.NoError(t, err)
			waitFor(t, func() bool {
				rec, _ := upstream.get(c.name)
				return len(rec.received) == c.open(body[:half])
			}, "the upstream gets the first half but its held tail before the rest is sent")

			_, err = pw.Write(body[half:])
			require.NoError(t, err)
			require.NoError(t, pw.Close())
			if c.name == "grpc" {
				assert.Equal(t, "grpc-status 0", <-answer)
			} else {
				assert.Equal(t, "200 OK", <-answer)
			}
			rec, _ := upstream.get(c.name)
			assert.True(t, rec.whole)
			assert.Equal(t, body, rec.received)
		})
	}
}

// waitingHook holds each request until the test lets it go on, then
// refuses it (FAILED_PRECONDITION) or accepts it.
type waitingHook struct {
	proceed chan struct{}
	refuse  bool
	mu      sync.Mutex
	bodies  [][]byte
}

func newWaitingHook(t *testing.T, refuse bool) *waitingHook {
	h := &waitingHook{proceed: make(chan struct{}), refuse: refuse}
	t.Cleanup(func() {
		select {
		case <-h.proceed:
		default:
			close(h.proceed)
		}
	})
	return h
}

func (h *waitingHook) Request(_ *pinecone.Index, _ *http.Request, body []byte) (pinecone.Call, error) {
	<-h.proceed
	h.mu.Lock()
	h.bodies = append(h.bodies, bytes.Clone(body))
	h.mu.Unlock()
	if h.refuse {
		return nil, &pinecone.Status{Code: pinecone.CodeFailedPrecondition, Message: "refused by the hook"}
	}
	return nil, nil
}

// The held tail of a refused request never reaches the upstream: the
// Hook refuses once the upstream has everything else, the client gets
// the refusal, and the upstream's request breaks off short of its end.
func TestRelay_RefusedRequestNeverReachesTheUpstreamWhole(t *testing.T) {
	for _, c := range streamCases() {
		t.Run(c.name, func(t *testing.T) {
			upstream := newTap(nil)
			hook := newWaitingHook(t, true)
			relay, base := tapRelay(t, upstream, pinecone.Config{Hook: hook})
			body := c.body("a")
			answer := c.send(t, base, c.name, bytes.NewReader(body))
			waitFor(t, func() bool {
				rec, _ := upstream.get(c.name)
				return len(rec.received) == c.open(body)
			}, "the upstream gets all but the held tail while the Hook decides")
			close(hook.proceed)

			if c.name == "grpc" {
				assert.Equal(t, "grpc-status 9", <-answer)
			} else {
				assert.Equal(t, "400 Bad Request", <-answer)
			}
			waitFor(t, func() bool { rec, _ := upstream.get(c.name); return rec.ended }, "the upstream's request ends")
			rec, _ := upstream.get(c.name)
			assert.False(t, rec.whole, "the upstream never got the whole body")
			assert.Equal(t, body[:c.open(body)], rec.received, "nor any of its held tail")
			assert.Equal(t, [][]byte{body}, hook.bodies, "the Hook saw the whole body")
			waitFor(t, func() bool { return relay.BufferedBytes() == 0 }, "the body's charge is returned")
		})
	}
}

// A refused upsert is not in the index: the emulator had all of it but
// the held tail while the Hook decided, and never stored the record.
func TestRelay_RefusedUpsertIsAbsentFromTheEmulator(t *testing.T) {
	for _, c := range streamCases() {
		t.Run(c.name, func(t *testing.T) {
			upstream := newTap(emulator.New(emulator.Config{}).Handler())
			upstreamURL := serveHTTP(t, upstream, nil)
			hook := newWaitingHook(t, true)
			relay, err := pinecone.New(pinecone.Config{Indexes: []*pinecone.Index{index(t, "docs", upstreamURL, nil)}, Hook: hook})
			require.NoError(t, err)
			t.Cleanup(relay.Close)
			base := serveOn(t, relay.Server(nil))

			body := c.body("forbidden")
			answer := c.send(t, base, c.name, bytes.NewReader(body))
			waitFor(t, func() bool {
				rec, _ := upstream.get(c.name)
				return len(rec.received) == c.open(body)
			}, "the emulator reads all but the held tail while the Hook decides")
			close(hook.proceed)
			assert.NotContains(t, <-answer, "200")
			waitFor(t, func() bool { rec, _ := upstream.get(c.name); return rec.ended }, "the emulator's request ends")

			resp := restCall(t, http.DefaultClient, http.MethodGet, upstreamURL+"/vectors/fetch?ids=forbidden&namespace=n", "", "")
			require.Equal(t, http.StatusOK, resp.status, resp.body)
			assert.JSONEq(t, `{}`, extractVectors(t, resp.body), "the refused record is not in the index")
		})
	}
}

// extractVectors is the "vectors" member of a fetch answer.
func extractVectors(t *testing.T, body string) string {
	t.Helper()
	var answer struct{ Vectors json.RawMessage }
	require.NoError(t, json.Unmarshal([]byte(body), &answer), body)
	return string(answer.Vectors)
}

// A body in a Content-Encoding the hold cannot read goes upstream only
// once the Hook accepted it: brotli has no magic number, so compressed
// bytes may start like JSON, and the hold would misread them.
func TestRelay_EncodedBodyIsHeldWhole(t *testing.T) {
	upstream := newTap(nil)
	hook := newWaitingHook(t, false)
	_, base := tapRelay(t, upstream, pinecone.Config{Hook: hook})
	body := []byte(`{"vectors":[{"id":"a","values":[1,2]}]} and more bytes a decoder would read`)
	req, err := http.NewRequest(http.MethodPost, base+"/vectors/upsert", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("X-Test", "encoded")
	req.Header.Set("Content-Encoding", "br")
	answered := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	// Time for a streamed body to reach the upstream (a slow machine may
	// let this pass without the rule; it cannot fail with it).
	time.Sleep(200 * time.Millisecond)
	rec, seen := upstream.get("encoded")
	assert.False(t, seen && len(rec.received) > 0, "nothing of an encoded body goes upstream before the Hook decided")
	close(hook.proceed)
	assert.Equal(t, http.StatusOK, <-answered)
	rec, _ = upstream.get("encoded")
	assert.True(t, rec.whole)
	assert.Equal(t, body, rec.received)
}
