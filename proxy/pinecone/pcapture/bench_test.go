package pcapture_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

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
	body := upsertJSON(100, 1536)
	req := httptest.NewRequest(http.MethodPost, "/vectors/upsert", bytes.NewReader(body))
	benchmarkHookUpsert(b, req, body, &http.Response{StatusCode: http.StatusOK})
}

// BenchmarkHook_GRPCUpsert is the same for one gRPC UpsertRequest of 100
// × 1536-dimension vectors; the confirmation is queued on grpc-status 0.
func BenchmarkHook_GRPCUpsert(b *testing.B) {
	body := upsertGRPC(100, 1536)
	req := httptest.NewRequest(http.MethodPost, "/VectorService/Upsert", bytes.NewReader(body))
	req.ProtoMajor, req.ProtoMinor, req.Proto = 2, 0, "HTTP/2.0"
	req.Header.Set("Content-Type", "application/grpc")
	benchmarkHookUpsert(b, req, body, &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Grpc-Status": {"0"}}})
}

func benchmarkHookUpsert(b *testing.B, req *http.Request, body []byte, ok *http.Response) {
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

// upsertGRPC is a gRPC upsert of n vectors of dim values with metadata (a
// subject and some text) in namespace "bench", framed as gRPC sends it.
func upsertGRPC(n, dim int) []byte {
	values := make([]byte, 4*dim)
	str := func(b []byte, num protowire.Number, s string) []byte {
		return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
	}
	msg := func(b []byte, num protowire.Number, m []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), m)
	}
	entry := func(key, value string) []byte { return msg(str(nil, 1, key), 2, str(nil, 3, value)) }
	var upsert []byte
	for i := range n {
		meta := msg(msg(nil, 1, entry("user_id", fmt.Sprintf("user-%d", i%7))), 1, entry("text", strings.Repeat("lorem ipsum ", 40)))
		vector := msg(msg(str(nil, 1, fmt.Sprintf("doc-%d", i)), 2, values), 3, meta)
		upsert = msg(upsert, 1, vector)
	}
	upsert = str(upsert, 2, "bench")
	framed := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(framed[1:], uint32(len(upsert)))
	return append(framed, upsert...)
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
