package pinecone_test

import (
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/lethe-privacy/lethe/proxy/pinecone"
)

// tap is a test upstream that records, for each request it receives (by
// its X-Test header), the body bytes its handler read and whether the body
// arrived whole (read to EOF) or broke off. With next set it hands the
// request on to next (the emulator), counting what next reads; without,
// it reads the body to its end and answers as an index host does: REST
// 200 {"upsertedCount":1}, gRPC status 0.
type tap struct {
	next http.Handler

	mu       sync.Mutex
	requests map[string]*tapped
}

// tapped is what reached the tap of one request.
type tapped struct {
	received []byte
	whole    bool // the body reached EOF
	ended    bool // the handler returned
}

func newTap(next http.Handler) *tap { return &tap{next: next, requests: map[string]*tapped{}} }

func (tp *tap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.Header.Get("X-Test")
	tp.mu.Lock()
	rec := &tapped{}
	tp.requests[name] = rec
	tp.mu.Unlock()
	defer func() {
		tp.mu.Lock()
		rec.ended = true
		tp.mu.Unlock()
	}()
	body := &tapReader{tap: tp, rec: rec, body: r.Body}
	if tp.next != nil {
		r.Body = body
		tp.next.ServeHTTP(w, r)
		return
	}
	if _, err := io.Copy(io.Discard, body); err != nil {
		return
	}
	if pinecone.IsGRPC(r) {
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Grpc-Status", "0")
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"upsertedCount":1}`)
}

// get returns a copy of what reached the tap of the request named name;
// ok is false while none did.
func (tp *tap) get(name string) (rec tapped, ok bool) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	r, ok := tp.requests[name]
	if !ok {
		return tapped{}, false
	}
	return tapped{received: append([]byte(nil), r.received...), whole: r.whole, ended: r.ended}, true
}

// count is how many requests reached the tap.
func (tp *tap) count() int {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return len(tp.requests)
}

type tapReader struct {
	tap  *tap
	rec  *tapped
	body io.ReadCloser
}

func (tr *tapReader) Read(p []byte) (int, error) {
	n, err := tr.body.Read(p)
	tr.tap.mu.Lock()
	tr.rec.received = append(tr.rec.received, p[:n]...)
	if err == io.EOF {
		tr.rec.whole = true
	}
	tr.tap.mu.Unlock()
	return n, err
}

func (tr *tapReader) Close() error { return tr.body.Close() }

// tapRelay serves a relay with cfg in front of upstream (a tap) and
// returns the relay and its URL. Without a Hook in cfg, the relay gets
// one that sees every body (seesAll), so that bodies are held as a
// capturing relay holds them.
func tapRelay(t *testing.T, upstream http.Handler, cfg pinecone.Config) (*pinecone.Relay, string) {
	t.Helper()
	if cfg.Hook == nil {
		cfg.Hook = seesAll{}
	}
	cfg.Indexes = []*pinecone.Index{index(t, "docs", serveHTTP(t, upstream, nil), nil)}
	relay, err := pinecone.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(relay.Close)
	return relay, serveOn(t, relay.Server(nil))
}

// seesAll is a Hook that wants every request's body and lets it pass:
// the relay reads and holds bodies as it does for writes it captures.
type seesAll struct{}

func (seesAll) Request(*pinecone.Index, *http.Request, []byte) (pinecone.Call, error) {
	return nil, nil
}
