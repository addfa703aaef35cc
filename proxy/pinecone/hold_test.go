package pinecone

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// openSteps feeds body to a tailHold in chunks of the given sizes (cycled;
// at least 1 byte each) and calls check with each forwardable prefix.
func openSteps(body []byte, grpc bool, chunks []int, check func(prefix []byte)) {
	h := newTailHold(grpc)
	prev := 0
	for i := 0; prev < len(body); i++ {
		n := min(max(chunks[i%len(chunks)], 1), len(body)-prev)
		open := h.forwardable(body[:prev+n], prev)
		check(body[:open])
		prev += n
	}
}

// decodesAValue reports whether a streaming JSON decoder reads a whole
// first value from b, which is what an upstream acting on a request before
// its end would need.
func decodesAValue(b []byte) bool {
	var v any
	return json.NewDecoder(bytes.NewReader(b)).Decode(&v) == nil
}

// randomJSON writes a random JSON value of at most depth levels.
func randomJSON(rng *rand.Rand, sb *strings.Builder, depth int) {
	kind := rng.IntN(7)
	if depth == 0 {
		kind = rng.IntN(4)
	}
	switch kind {
	case 0:
		fmt.Fprintf(sb, "%g", rng.NormFloat64()*1e3)
	case 1:
		sb.WriteString([]string{"true", "false", "null"}[rng.IntN(3)])
	case 2:
		fmt.Fprintf(sb, "%d", rng.IntN(100000))
	case 3:
		b, _ := json.Marshal(strings.Repeat("ab\"\\\n}é ", rng.IntN(4)))
		sb.Write(b)
	case 4, 5:
		sb.WriteByte('{')
		for i := range rng.IntN(4) {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(randomSpace(rng))
			fmt.Fprintf(sb, `"k%d"`, i)
			sb.WriteString(randomSpace(rng) + ":" + randomSpace(rng))
			randomJSON(rng, sb, depth-1)
			sb.WriteString(randomSpace(rng))
		}
		sb.WriteByte('}')
	default:
		sb.WriteByte('[')
		for i := range rng.IntN(4) {
			if i > 0 {
				sb.WriteByte(',')
			}
			randomJSON(rng, sb, depth-1)
		}
		sb.WriteByte(']')
	}
}

// randomSpace is up to three bytes of JSON whitespace, newlines rarely.
func randomSpace(rng *rand.Rand) string {
	var sb strings.Builder
	for range rng.IntN(4) {
		sb.WriteByte(" \t\r \n"[rng.IntN(5)])
	}
	return sb.String()
}

// For random JSON bodies, and NDJSON bodies of several values, with random
// whitespace around them, sent in random chunks, the part forwarded before
// the Hook decided is never a complete JSON value: json.Valid is false,
// and a streaming decoder cannot read a first value from it.
func TestTailHold_ForwardedJSONIsNeverAValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 26))
	for i := range 5000 {
		var sb strings.Builder
		lines := 1
		if i%3 == 0 {
			lines = 1 + rng.IntN(4) // NDJSON
		}
		for l := range lines {
			if l > 0 {
				sb.WriteString("\n")
			}
			sb.WriteString(strings.ReplaceAll(randomSpace(rng), "\n", ""))
			randomJSON(rng, &sb, 4)
			sb.WriteString(strings.ReplaceAll(randomSpace(rng), "\n", ""))
		}
		sb.WriteString(randomSpace(rng))
		body := []byte(sb.String())
		chunks := []int{1 + rng.IntN(8), 1 + rng.IntN(64), 1 + rng.IntN(3)}
		openSteps(body, false, chunks, func(prefix []byte) {
			if json.Valid(prefix) || decodesAValue(prefix) {
				t.Fatalf("body %q: forwarded prefix %q is a complete value", body, prefix)
			}
		})
	}
}

// FuzzTailHold_JSON: for any body that is JSON or NDJSON, no forwarded
// prefix holds a complete value.
func FuzzTailHold_JSON(f *testing.F) {
	for _, seed := range []string{`{"vectors":[{"id":"a","values":[1,2]}]}  `, "{\"_id\":\"a\"}\n{\"_id\":\"b\"}\n", `"x"`, `[1, 2] `, "12", ` {} `} {
		f.Add([]byte(seed), uint8(3))
	}
	f.Fuzz(func(t *testing.T, body []byte, chunk uint8) {
		for _, line := range bytes.Split(body, []byte("\n")) {
			if len(bytes.TrimSpace(line)) > 0 && !json.Valid(line) {
				if !json.Valid(body) {
					return // neither JSON nor NDJSON
				}
				break
			}
		}
		openSteps(body, false, []int{int(chunk), 1, int(chunk) * 7}, func(prefix []byte) {
			if decodesAValue(prefix) {
				t.Fatalf("body %q: forwarded prefix %q holds a complete value", body, prefix)
			}
		})
	})
}

// A gRPC body's forwarded part never holds a whole message: all of the
// first message but its last byte at most, whatever follows it.
func TestTailHold_GRPCHoldsTheFirstMessagesLastByte(t *testing.T) {
	frame := func(n int) []byte {
		b := make([]byte, 5+n)
		binary.BigEndian.PutUint32(b[1:], uint32(n))
		return b
	}
	for _, body := range [][]byte{frame(0), frame(1), frame(300), append(frame(10), frame(20)...), {0, 0}} {
		end := len(body) - 1
		if len(body) >= 5 {
			end = min(end, 5+int(binary.BigEndian.Uint32(body[1:]))-1)
		}
		for _, chunk := range []int{1, 2, 7, 1000} {
			last := -1
			openSteps(body, true, []int{chunk}, func(prefix []byte) { last = max(last, len(prefix)) })
			if last != max(end, 0) {
				t.Errorf("body of %d bytes in chunks of %d: forwarded %d bytes, want %d", len(body), chunk, last, end)
			}
		}
	}
}
