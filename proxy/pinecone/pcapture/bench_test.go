package pcapture_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pinecone"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcapture"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcextract"
)

// upsertJSON is a REST upsert of n vectors of dim values with metadata (a
// subject and some text), as bench/pinecone.sh sends.
func upsertJSON(n, dim int) []byte {
	var b strings.Builder
	b.WriteString(`{"namespace":"bench","vectors":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"doc-%d","values":[`, i)
		for d := range dim {
			if d > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatFloat(float64(d)/float64(dim)-0.5, 'g', 8, 32))
		}
		fmt.Fprintf(&b, `],"metadata":{"user_id":"user-%d","text":"%s"}}`, i%7, strings.Repeat("lorem ipsum ", 40))
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkHook_RESTUpsert is capture's share of relaying one REST upsert
// of 100 × 1536-dimension vectors: tags, the durable intent in a SQLite
// ledger, and the confirmation queued on a 200.
func BenchmarkHook_RESTUpsert(b *testing.B) {
	l, err := ledger.OpenSQLite(filepath.Join(b.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	h, _ := ledger.NewHasher(bytes.Repeat([]byte{7}, 32))
	pg, _ := extract.NewRules(nil)
	core := capture.New(capture.Config{Rules: pg, Ledger: l, Hasher: h})
	defer core.Close()
	rules, _ := pcextract.NewRules("bench", map[string][]string{"bench": {"user_id"}})
	hook := pcapture.New(core, []*pcextract.Rules{rules})
	ix := &pinecone.Index{Name: "bench"}
	body := upsertJSON(100, 1536)
	req := httptest.NewRequest(http.MethodPost, "/vectors/upsert", bytes.NewReader(body))
	ok := &http.Response{StatusCode: http.StatusOK}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for range b.N {
		call, err := hook.Request(ix, req, body)
		if err != nil || call == nil {
			b.Fatal(err)
		}
		call.Response(ok)
	}
}

// BenchmarkHook_Read is what capture costs a request that writes nothing
// (a query): classifying it.
func BenchmarkHook_Read(b *testing.B) {
	rules, _ := pcextract.NewRules("bench", map[string][]string{"*": {"user_id"}})
	core := capture.New(capture.Config{})
	defer core.Close()
	hook := pcapture.New(core, []*pcextract.Rules{rules})
	ix := &pinecone.Index{Name: "bench"}
	req := httptest.NewRequest(http.MethodPost, "/query", nil)
	b.ReportAllocs()
	for range b.N {
		if call, err := hook.Request(ix, req, nil); call != nil || err != nil {
			b.Fatal(call, err)
		}
	}
}
