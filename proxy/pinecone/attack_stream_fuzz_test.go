package pinecone

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fuzzUpstream records, per request (by X-Test), the body bytes its
// handler read and whether it read to the end; it answers as an index
// host does once it has the body whole.
type fuzzUpstream struct {
	mu       sync.Mutex
	received map[string][]byte
	whole    map[string]bool
	ended    map[string]bool
}

func (u *fuzzUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.Header.Get("X-Test")
	defer func() {
		u.mu.Lock()
		u.ended[name] = true
		u.mu.Unlock()
	}()
	buf := make([]byte, 512)
	for {
		n, err := r.Body.Read(buf)
		u.mu.Lock()
		u.received[name] = append(u.received[name], buf[:n]...)
		if err == io.EOF {
			u.whole[name] = true
		}
		u.mu.Unlock()
		if err != nil {
			if err != io.EOF {
				return
			}
			break
		}
	}
	if IsGRPC(r) {
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Grpc-Status", "0")
		return
	}
	io.WriteString(w, `{"upsertedCount":1}`)
}

func (u *fuzzUpstream) state(name string) (received []byte, whole, ended bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return bytes.Clone(u.received[name]), u.whole[name], u.ended[name]
}

// fuzzHook tells when it is asked about a request, waits for the verdict
// the test gives it, and applies it.
type fuzzHook struct {
	asked   chan string
	verdict chan uint8
	body    chan []byte
}

type fuzzCall struct{}

func (fuzzCall) Response(*http.Response) error { return nil }
func (fuzzCall) Unreachable(error)             {}

func (h *fuzzHook) Request(_ *Index, r *http.Request, body []byte) (Call, error) {
	h.asked <- r.Header.Get("X-Test")
	h.body <- bytes.Clone(body)
	switch <-h.verdict % 4 {
	case 0:
		return nil, nil
	case 1:
		return fuzzCall{}, nil
	case 2:
		return nil, &Status{Code: CodeFailedPrecondition, Message: "refused"}
	default:
		return nil, fmt.Errorf("a hook failure")
	}
}

// chunkReader hands out body in chunks of random sizes.
type chunkReader struct {
	body []byte
	rng  *rand.Rand
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.body) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1+c.rng.IntN(64))], c.body)
	c.body = c.body[n:]
	return n, nil
}

// holdOf is how much of a whole body the relay may forward before the
// Hook decides: the tail hold's answer once the whole body has arrived,
// nothing for a gRPC body whose first message declares more than limit
// (read whole first).
func holdOf(body []byte, grpc bool, limit int64) int {
	if grpc && len(body) >= 5 && 5+int64(binary.BigEndian.Uint32(body[1:5])) > limit {
		return 0
	}
	h := newTailHold(grpc)
	return h.forwardable(body, 0)
}

// FuzzAttack_Stream_RelayHoldsTheTailUntilTheVerdict drives bodies in
// random chunkings and random Hook verdicts (accept, accept with a Call,
// refuse, fail) through the relay to a recording upstream. Once the Hook
// is asked, the upstream has exactly the part of the body the hold lets
// go, and nothing it could act on (a whole gRPC message, a JSON value a
// streaming decoder reads); then an accepted body reaches it whole and
// byte for byte, and the client gets its answer; a refused or failed one
// never reaches it whole, and the client gets the Hook's code; a body
// over the limit is answered RESOURCE_EXHAUSTED and never reaches it
// whole; every charge is returned.
func FuzzAttack_Stream_RelayHoldsTheTailUntilTheVerdict(f *testing.F) {
	f.Add([]byte(`{"namespace":"n","vectors":[{"id":"a","values":[1,2]}]}`), false, uint8(0), uint64(1))
	f.Add([]byte(`{"a":1}{"b":2}`), false, uint8(2), uint64(2))
	f.Add([]byte("{\"_id\":\"a\"}\n{\"_id\":\"b\"}\n"), false, uint8(3), uint64(3))
	f.Add([]byte{0, 0, 0, 0, 3, 10, 1, 'a', 0, 0}, true, uint8(2), uint64(4))
	f.Add([]byte{0, 0, 0, 0, 0}, true, uint8(1), uint64(5))
	f.Add([]byte{1, 0, 0, 0x20, 0}, true, uint8(0), uint64(6))
	f.Add(bytes.Repeat([]byte(" "), 5000), false, uint8(0), uint64(7))

	const limit = 4096
	upstream := &fuzzUpstream{received: map[string][]byte{}, whole: map[string]bool{}, ended: map[string]bool{}}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	upstreamServer := &http.Server{Handler: upstream, Protocols: &protocols, ReadHeaderTimeout: 10 * time.Second}
	upstreamListener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	go upstreamServer.Serve(upstreamListener)
	f.Cleanup(func() { upstreamServer.Close() })
	hook := &fuzzHook{asked: make(chan string, 1), verdict: make(chan uint8, 1), body: make(chan []byte, 1)}
	relay, err := New(Config{Indexes: []*Index{{Name: "docs", Upstream: &url.URL{Scheme: "http", Host: upstreamListener.Addr().String()}}},
		Hook: hook, MaxRequestBytes: limit})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(relay.Close)
	relayServer := relay.Server(nil)
	relayListener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	go Serve(relayServer, relayListener)
	f.Cleanup(func() { relayServer.Close() })
	base := "http://" + relayListener.Addr().String()
	restClient := &http.Client{}
	var h2c http.Protocols
	h2c.SetUnencryptedHTTP2(true)
	grpcClient := &http.Client{Transport: &http.Transport{Protocols: &h2c}}
	var requests atomic.Int64

	f.Fuzz(func(t *testing.T, body []byte, grpc bool, verdict uint8, seed uint64) {
		if len(body) == 0 {
			return // a request without a body is not streamed
		}
		name := strconv.FormatInt(requests.Add(1), 10)
		rng := rand.New(rand.NewPCG(seed, 26))
		path, client := "/vectors/upsert", restClient
		if grpc {
			path, client = "/VectorService/Upsert", grpcClient
		}
		req, err := http.NewRequest(http.MethodPost, base+path, &chunkReader{body: body, rng: rng})
		if err != nil {
			t.Fatal(err)
		}
		if !grpc && seed%2 == 0 {
			req.ContentLength = int64(len(body))
		}
		req.Header.Set("X-Test", name)
		if grpc {
			req.Header.Set("Content-Type", "application/grpc")
		}
		answer := make(chan string, 1)
		go func() {
			resp, err := client.Do(req)
			if err != nil {
				answer <- "error: " + err.Error()
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if grpc {
				answer <- "grpc-status " + resp.Header.Get("Grpc-Status") + resp.Trailer.Get("Grpc-Status")
				return
			}
			answer <- strconv.Itoa(resp.StatusCode)
		}()

		var got string
		select {
		case got = <-answer: // never asked: over the limit
			if len(body) <= limit {
				t.Fatalf("answered %s without asking the Hook about a body of %d bytes", got, len(body))
			}
			if want := map[bool]string{true: "grpc-status 8", false: "413"}[grpc]; got != want {
				t.Fatalf("a body over the limit: answered %q, want %q", got, want)
			}
		case asked := <-hook.asked:
			if asked != name {
				t.Fatalf("the Hook was asked about request %s during request %s", asked, name)
			}
			if seen := <-hook.body; !bytes.Equal(seen, body) {
				t.Fatalf("the Hook saw %q, not the body %q", seen, body)
			}
			open := holdOf(body, grpc, limit)
			if !eventually(func() bool { received, _, _ := upstream.state(name); return len(received) >= open }) {
				received, _, _ := upstream.state(name)
				t.Fatalf("the upstream got %d bytes before the decision, want %d", len(received), open)
			}
			received, whole, _ := upstream.state(name)
			if whole || !bytes.Equal(received, body[:open]) {
				t.Fatalf("before the decision the upstream got %q (whole %v), want %q", received, whole, body[:open])
			}
			if actedOnPrefix(received, grpc) {
				t.Fatalf("before the decision the upstream got %q, which it could act on", received)
			}
			hook.verdict <- verdict
			got = <-answer
			switch verdict % 4 {
			case 0, 1:
				if want := map[bool]string{true: "grpc-status 0", false: "200"}[grpc]; got != want {
					t.Fatalf("accepted: answered %q, want %q", got, want)
				}
				if received, whole, _ := upstream.state(name); !whole || !bytes.Equal(received, body) {
					t.Fatalf("accepted: the upstream got %q (whole %v), want the whole body", received, whole)
				}
			default:
				want := map[bool]string{true: "grpc-status 9", false: "400"}[grpc]
				if verdict%4 == 3 {
					want = map[bool]string{true: "grpc-status 13", false: "500"}[grpc]
				}
				if got != want {
					t.Fatalf("refused: answered %q, want %q", got, want)
				}
			}
		}
		if !eventually(func() bool { received, _, ended := upstream.state(name); return ended || len(received) == 0 }) {
			t.Fatal("the upstream's request never ended")
		}
		if received, whole, _ := upstream.state(name); verdict%4 >= 2 || len(body) > limit {
			if whole {
				t.Fatalf("refused or over the limit: the upstream got the whole body %q", received)
			}
		}
		if !eventually(func() bool { return relay.BufferedBytes() == 0 }) {
			t.Fatalf("%d bytes still charged", relay.BufferedBytes())
		}
	})
}

// actedOnPrefix reports whether an upstream acting on a body as it arrives
// could act on received.
func actedOnPrefix(received []byte, grpc bool) bool {
	if grpc {
		return len(received) >= 5 && int64(len(received)) >= 5+int64(binary.BigEndian.Uint32(received[1:5]))
	}
	var v any
	return json.NewDecoder(bytes.NewReader(received)).Decode(&v) == nil
}

// eventually reports whether cond holds within 10 s.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}
