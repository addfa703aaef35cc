package pcapture_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pinecone"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcapture"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcextract"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

const apiKey = "test-key-0123"

// rig is a relay with capture in front of an emulator index (by default
// "docs", whose namespaces name their subject in metadata user_id), over
// a SQLite ledger.
type rig struct {
	url      string // the relay
	upstream string // the emulator
	core     *capture.Capture
	ledger   *ledger.SQLite
	hasher   *ledger.Hasher
	tombs    *capture.Tombstones
	received *counter // requests that reached the emulator whole
	hook     *pcapture.Hook
}

type rigOptions struct {
	mode     capture.Mode
	upstream string              // instead of a fresh emulator
	index    string              // default "docs"
	rules    map[string][]string // default {"*": ["user_id"]}
}

func newRig(t *testing.T, o rigOptions) *rig {
	t.Helper()
	r := &rig{received: &counter{}, upstream: o.upstream}
	if o.index == "" {
		o.index = "docs"
	}
	relayListener := listen(t)
	r.url = "http://" + relayListener.Addr().String()
	if r.upstream == "" {
		// The emulator names the relay as the index's host, as the Node
		// SDK's upsertRecords asks the control plane for it.
		h := emulator.New(emulator.Config{APIKey: apiKey, IndexName: o.index, Host: r.url}).Handler()
		// A request counts once its body arrived whole: the relay
		// forwards a body as it arrives and aborts a refused one before
		// its last bytes, so the emulator sees it start but never whole.
		r.upstream = serve(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			body, err := io.ReadAll(req.Body)
			if err != nil {
				return
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
			r.received.add(req.URL.Path)
			h.ServeHTTP(w, req)
		}))
	}
	l, err := ledger.OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	r.ledger = l
	r.hasher, err = ledger.NewHasher(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, err)
	r.tombs = capture.NewTombstones()
	rules := o.rules
	if rules == nil {
		rules = map[string][]string{"*": {"user_id"}}
	}
	pr, err := pcextract.NewRules(o.index, rules)
	require.NoError(t, err)
	pgRules, err := extract.NewRules(nil)
	require.NoError(t, err)
	r.core = capture.New(capture.Config{Rules: pgRules, Ledger: l, Hasher: r.hasher, Mode: o.mode,
		Tombstones: r.tombs, ConfirmHold: time.Millisecond, IntentTimeout: 2 * time.Second})
	t.Cleanup(r.core.Close)
	u, err := url.Parse(r.upstream)
	require.NoError(t, err)
	r.hook = pcapture.New(r.core, []*pcextract.Rules{pr})
	relay, err := pinecone.New(pinecone.Config{
		Indexes: []*pinecone.Index{{Name: o.index, Upstream: u}},
		Hook:    r.hook,
	})
	require.NoError(t, err)
	t.Cleanup(relay.Close)
	hs := relay.Server(nil)
	go pinecone.Serve(hs, relayListener)
	t.Cleanup(func() { hs.Close() })
	return r
}

// counter counts requests by path.
type counter struct {
	mu    sync.Mutex
	paths []string
}

func (c *counter) add(p string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paths = append(c.paths, p)
}

func (c *counter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.paths)
}

func (c *counter) count(p string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, q := range c.paths {
		if q == p {
			n++
		}
	}
	return n
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return l
}

// serve serves h (HTTP/1.1 and h2c) until the test ends.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	protocols.SetUnencryptedHTTP2(true)
	hs := &http.Server{Handler: h, Protocols: &protocols, ReadHeaderTimeout: 30 * time.Second}
	l := listen(t)
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })
	return "http://" + l.Addr().String()
}

// answer is a REST answer: its status and, for errors, Pinecone's code
// and message.
type answer struct {
	status  int
	code    int
	message string
}

// post sends body to the relay's path over REST with client.
func post(t *testing.T, client *http.Client, base, path, body string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewBufferString(body))
	require.NoError(t, err)
	req.Header.Set("Api-Key", apiKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := answer{status: resp.StatusCode}
	if resp.StatusCode >= 300 {
		var e struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		require.NoError(t, json.Unmarshal(b, &e), "body %s", b)
		a.code, a.message = e.Code, e.Message
	}
	return a
}

// records returns the ledger's records about subject as "table/id state",
// sorted.
func (r *rig) records(t *testing.T, subject string) []string {
	t.Helper()
	recs, err := r.ledger.BySubject(context.Background(), r.hasher.Hash(subject))
	require.NoError(t, err)
	var out []string
	for _, rec := range recs {
		out = append(out, rec.Table+"/"+rec.RecordID+" "+string(rec.State))
	}
	sort.Strings(out)
	return out
}

// eventually waits until the ledger's records about subject are want.
func (r *rig) eventually(t *testing.T, subject string, want ...string) {
	t.Helper()
	sort.Strings(want)
	var got []string
	require.Eventually(t, func() bool {
		got = r.records(t, subject)
		return slices.Equal(got, want)
	}, 20*time.Second, 20*time.Millisecond, "ledger records about %s: got %v, want %v", subject, &got, want)
}

// pending returns the entries of pending intents as "table/id".
func (r *rig) pending(t *testing.T) []string {
	t.Helper()
	in, err := r.ledger.Pending(context.Background())
	require.NoError(t, err)
	var out []string
	for _, i := range in {
		for _, e := range i.Entries {
			out = append(out, e.Table+"/"+e.RecordID)
		}
	}
	sort.Strings(out)
	return out
}
