package pinecone

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// A body holding several JSON values one after another (nothing, spaces,
// tabs or a carriage return between them, no newline) or one value and
// garbage: a streaming decoder at the upstream reads the first value as
// soon as its closing byte arrives, so that byte is held, whatever comes
// after it and however the body is chunked.
func TestAttack_Stream_HoldKeepsTheFirstOfSeveralValuesClosing(t *testing.T) {
	for _, body := range []string{
		`{"a":1}{"b":2}`,
		`{} garbage`,
		`{"a":1} {"b":2}`,
		"[1]\r[2]",
		`"x""y"`,
		"{\"_id\":\"a\",\"user_id\":\"alice\"}\t{\"_id\":\"b\"}\n",
		`{"s":"}\"]"}{"b":2}`,
		` [{"a":[1,{"b":"\\"}]}] [] `,
	} {
		for _, chunk := range []int{1, 2, 5, 1000} {
			openSteps([]byte(body), false, []int{chunk}, func(prefix []byte) {
				var v any
				if json.NewDecoder(bytes.NewReader(prefix)).Decode(&v) == nil {
					t.Fatalf("body %q in chunks of %d: forwarded prefix %q holds a complete value", body, chunk, prefix)
				}
			})
		}
	}
}

// FuzzAttack_Stream_HoldAnyBody: for any body, JSON or not, sent in any
// chunks, no forwarded prefix holds a value a streaming decoder reads.
func FuzzAttack_Stream_HoldAnyBody(f *testing.F) {
	for _, seed := range []string{`{"a":1}{"b":2}`, `{} x`, "\"a\\\"\" 1", `[[]]]`, "{\"a\":\"\\u00\"}", " \n{\"_id\":1}\r\n{"} {
		f.Add([]byte(seed), uint8(1), uint8(7))
	}
	f.Fuzz(func(t *testing.T, body []byte, chunk, other uint8) {
		openSteps(body, false, []int{int(chunk), int(other), 1}, func(prefix []byte) {
			var v any
			if json.NewDecoder(bytes.NewReader(prefix)).Decode(&v) == nil {
				t.Fatalf("body %q: forwarded prefix %q holds a complete value", body, prefix)
			}
		})
	})
}

// BenchmarkAttack_Stream_HoldLargeUpsert: what the hold costs a 1.4 MB
// REST upsert (100 vectors of 1536 dims) arriving in 32 KiB reads.
func BenchmarkAttack_Stream_HoldLargeUpsert(b *testing.B) {
	values := make([]string, 1536)
	for i := range values {
		values[i] = fmt.Sprintf("%.6f", float64(i%97)/97)
	}
	var sb strings.Builder
	sb.WriteString(`{"namespace":"n","vectors":[`)
	for i := range 100 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"id":"v%d","values":[%s],"metadata":{"user_id":"u%d","text":"a \"quoted\" {text}"}}`, i, strings.Join(values, ","), i)
	}
	sb.WriteString("]}\n")
	body := []byte(sb.String())
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		h := newTailHold(false)
		for prev := 0; prev < len(body); prev += 32 << 10 {
			if open := h.forwardable(body[:min(prev+32<<10, len(body))], prev); open > len(body)-2 {
				b.Fatal("the closing byte went early")
			}
		}
	}
}
