package pgwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// msg frames one regular protocol message.
func msg(typ byte, body []byte) []byte {
	return appendTestMessage(nil, typ, body)
}

// msgs concatenates framed messages into one stream.
func msgs(parts ...[]byte) []byte {
	return bytes.Join(parts, nil)
}

// rawHeader is a message header announcing length (which counts itself),
// followed by nothing.
func rawHeader(typ byte, length uint32) []byte {
	b := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], length)
	return b
}

// appendTestMessage is the test's own framing, independent of appendMessage.
func appendTestMessage(dst []byte, typ byte, body []byte) []byte {
	dst = append(dst, typ)
	dst = binary.BigEndian.AppendUint32(dst, uint32(4+len(body)))
	return append(dst, body...)
}

// filled returns n bytes of a recognisable, non-repeating-at-short-range pattern.
func filled(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// chunkReader hands out data in the chunk sizes next chooses, like a socket
// that returns whatever has arrived. It never returns (0, nil) for a
// non-empty p.
type chunkReader struct {
	data      []byte
	next      func() int
	delivered int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	n := min(max(r.next(), 1), len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	r.delivered += n
	return n, nil
}

// chunking is a way of cutting a byte stream into reads.
type chunking struct {
	name string
	r    func(data []byte) io.Reader
}

func fixedChunks(n int) func() int { return func() int { return n } }

func cyclingChunks(sizes ...int) func() int {
	i := 0
	return func() int { n := sizes[i%len(sizes)]; i++; return n }
}

func randomChunks(seed uint64, maxChunk int) func() int {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	return func() int { return 1 + rng.IntN(maxChunk) }
}

// chunkings are the read patterns every framing test runs under: whole
// reads, single bytes, odd sizes that split headers at every offset, and
// reads that return the last data together with io.EOF.
var chunkings = []chunking{
	{"whole", func(d []byte) io.Reader { return &chunkReader{data: d, next: fixedChunks(1 << 30)} }},
	{"1 byte", func(d []byte) io.Reader { return &chunkReader{data: d, next: fixedChunks(1)} }},
	{"3 bytes", func(d []byte) io.Reader { return &chunkReader{data: d, next: fixedChunks(3)} }},
	{"splits inside headers", func(d []byte) io.Reader { return &chunkReader{data: d, next: cyclingChunks(2, 4, 1, 7, 5, 3, 6)} }},
	{"random up to 64", func(d []byte) io.Reader { return &chunkReader{data: d, next: randomChunks(1, 64)} }},
	{"random up to 40000", func(d []byte) io.Reader { return &chunkReader{data: d, next: randomChunks(2, 40000)} }},
	{"data with EOF", func(d []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(d)) }},
	{"half reads", func(d []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(d)) }},
}

// recorded is one message handed to handle.
type recorded struct {
	typ  byte
	body []byte
}

// runPump runs a pump over src until it stops and returns what it wrote,
// what handle saw (copied) and run's error.
func runPump(t *testing.T, src io.Reader, maxLen int, inspect func(byte) bool,
	decide func(typ byte, body []byte) (verdict, error)) (*pump, []byte, []recorded, error) {
	t.Helper()
	var out bytes.Buffer
	p := newPump(src, &out, maxLen)
	var seen []recorded
	p.inspect = inspect
	p.handle = func(typ byte, body []byte) (verdict, error) {
		require.True(t, inspect(typ), "handle called for uninspected type %q", typ)
		seen = append(seen, recorded{typ, bytes.Clone(body)})
		if decide == nil {
			return verdict{}, nil
		}
		return decide(typ, body)
	}
	err := p.run()
	return p, out.Bytes(), seen, err
}

func inspectTypes(types string) func(byte) bool {
	return func(typ byte) bool { return bytes.IndexByte([]byte(types), typ) >= 0 }
}

// smallStream is n small messages of mixed types with bodies of 0..40 bytes.
func smallStream(n int) (stream []byte, messages []recorded) {
	rng := rand.New(rand.NewPCG(7, 7))
	const types = "QPBESDdHC"
	for i := range n {
		typ := types[rng.IntN(len(types))]
		body := filled(rng.IntN(41))
		if len(body) > 0 {
			body[0] = byte(i) // no two messages alike
		}
		stream = appendTestMessage(stream, typ, body)
		messages = append(messages, recorded{typ, body})
	}
	return stream, messages
}

func TestPump_PassesManySmallMessagesThroughByteIdentical(t *testing.T) {
	stream, messages := smallStream(2000)
	inspections := []struct {
		name  string
		types string
	}{
		{"nothing inspected", ""},
		{"some types inspected", "QSd"},
		{"every type inspected", "QPBESDdHC"},
	}
	for _, c := range chunkings {
		for _, in := range inspections {
			t.Run(c.name+"/"+in.name, func(t *testing.T) {
				p, out, seen, err := runPump(t, c.r(stream), 0, inspectTypes(in.types), nil)
				require.ErrorIs(t, err, io.EOF)
				require.Equal(t, stream, out)
				var want []recorded
				for _, m := range messages {
					if inspectTypes(in.types)(m.typ) {
						want = append(want, m)
					}
				}
				require.Equal(t, want, seen)
				assert.True(t, p.atBoundary())
			})
		}
	}
}

// bufWatcher is a writer that checks, at every write, that the pump has not
// grown its buffer, and notes whether the big message's first bytes were
// written before the reader had delivered all of it.
type bufWatcher struct {
	t          *testing.T
	p          *pump
	src        *chunkReader
	out        bytes.Buffer
	bigStart   int // offset of the big message in the stream
	bigEnd     int
	streamedAt int // reader position when the big message's first byte was written; -1 before
	maxWrite   int
}

func (w *bufWatcher) Write(b []byte) (int, error) {
	if len(w.p.buf) != initialBufSize {
		w.t.Errorf("pump buffer grew to %d bytes while nothing is inspected", len(w.p.buf))
	}
	if w.streamedAt < 0 && w.out.Len()+len(b) > w.bigStart {
		w.streamedAt = w.src.delivered
	}
	w.maxWrite = max(w.maxWrite, len(b))
	return w.out.Write(b)
}

func TestPump_StreamsUninspectedMessageLargerThanBuffer(t *testing.T) {
	cases := []struct {
		name    string
		bodyLen int
		chunks  func() int
	}{
		{"one byte over the buffer, whole reads", initialBufSize + 1, fixedChunks(1 << 30)},
		{"one byte over the buffer, 1-byte reads", initialBufSize + 1, fixedChunks(1)},
		{"100 KiB, random reads", 100 << 10, randomChunks(3, 5000)},
		{"1 MiB, whole reads", 1 << 20, fixedChunks(1 << 30)},
		{"1 MiB, reads splitting headers", 1 << 20, cyclingChunks(2, 4093, 1, 8191, 3)},
		{"1 MiB, random reads", 1 << 20, randomChunks(4, 40000)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := msgs(msg('Q', []byte("SELECT 1\x00")), msg('S', nil))
			big := msg('d', filled(tc.bodyLen))
			after := msgs(msg('c', nil), msg('Q', []byte("SELECT 2\x00")))
			stream := msgs(before, big, after)

			src := &chunkReader{data: stream, next: tc.chunks}
			w := &bufWatcher{t: t, src: src, bigStart: len(before), bigEnd: len(before) + len(big), streamedAt: -1}
			p := newPump(src, w, 0)
			w.p = p
			var seen []recorded
			p.inspect = inspectTypes("QS") // not 'd'
			p.handle = func(typ byte, body []byte) (verdict, error) {
				seen = append(seen, recorded{typ, bytes.Clone(body)})
				return verdict{}, nil
			}

			err := p.run()
			require.ErrorIs(t, err, io.EOF)
			require.True(t, bytes.Equal(stream, w.out.Bytes()), "output differs from input")
			assert.Equal(t, initialBufSize, len(p.buf))
			assert.LessOrEqual(t, w.maxWrite, initialBufSize)
			require.GreaterOrEqual(t, w.streamedAt, 0)
			assert.Less(t, w.streamedAt, w.bigEnd, "the big message was forwarded only after it had arrived whole")
			require.Len(t, seen, 3)
			assert.Equal(t, recorded{'Q', []byte("SELECT 2\x00")}, seen[2])
		})
	}
}

func TestPump_DeliversInspectedMessageLargerThanBufferWhole(t *testing.T) {
	sizes := []struct {
		name    string
		bodyLen int
	}{
		{"exactly the buffer", initialBufSize - headerLen},
		{"one byte over the buffer", initialBufSize - headerLen + 1},
		{"100 KiB", 100 << 10},
		{"1 MiB", 1 << 20},
	}
	for _, size := range sizes {
		for _, c := range chunkings {
			t.Run(size.name+"/"+c.name, func(t *testing.T) {
				// Small messages before the big one leave it at an
				// unaligned offset, with scanned bytes not yet written.
				before := msgs(msg('B', filled(13)), msg('E', filled(9)), msg('P', filled(101)))
				body := filled(size.bodyLen)
				after := msgs(msg('S', nil), msg('d', []byte("tail")))
				stream := msgs(before, msg('d', body), after)

				p, out, seen, err := runPump(t, c.r(stream), 0, inspectTypes("dS"), nil)
				require.ErrorIs(t, err, io.EOF)
				require.True(t, bytes.Equal(stream, out), "output differs from input")
				require.Len(t, seen, 3)
				assert.Equal(t, byte('d'), seen[0].typ)
				assert.True(t, bytes.Equal(body, seen[0].body), "inspected body differs from the message sent")
				assert.Equal(t, recorded{'S', []byte{}}, seen[1])
				assert.Equal(t, recorded{'d', []byte("tail")}, seen[2])
				_ = p
			})
		}
	}
}

func TestPump_AppliesVerdicts(t *testing.T) {
	q1 := msg('Q', []byte("DROP TABLE t\x00"))
	parse := msg('P', []byte("\x00SELECT $1\x00\x00\x00"))
	q2 := msg('Q', []byte("SELECT 2\x00"))
	sync := msg('S', nil)
	// q1 follows other messages in the same read, so what was scanned
	// before it must be written before the verdict's prefix.
	stream := msgs(parse, q1, q2, sync)
	replacement := msg('Q', []byte("DO $$BEGIN RAISE EXCEPTION 'no'; END$$\x00"))

	cases := []struct {
		name    string
		verdict verdict // applied to q1
		want    []byte
	}{
		{"zero verdict forwards the message", verdict{}, stream},
		{"prefix with drop replaces the message", verdict{prefix: replacement, drop: true}, msgs(parse, replacement, q2, sync)},
		{"prefix without drop goes before the message", verdict{prefix: replacement}, msgs(parse, replacement, q1, q2, sync)},
		{"drop without prefix removes the message", verdict{drop: true}, msgs(parse, q2, sync)},
		{"empty prefix without drop changes nothing", verdict{prefix: []byte{}}, stream},
	}
	for _, tc := range cases {
		for _, c := range chunkings {
			t.Run(tc.name+"/"+c.name, func(t *testing.T) {
				_, out, seen, err := runPump(t, c.r(stream), 0, inspectTypes("QS"),
					func(typ byte, body []byte) (verdict, error) {
						if typ == 'Q' && bytes.HasPrefix(body, []byte("DROP")) {
							return tc.verdict, nil
						}
						return verdict{}, nil
					})
				require.ErrorIs(t, err, io.EOF)
				assert.Equal(t, tc.want, out)
				assert.Len(t, seen, 3)
			})
		}
	}
}

func TestPump_AppliesVerdictToMessageAfterStreamedOne(t *testing.T) {
	// A verdict right after a message that was streamed in pieces must not
	// lose or repeat any of the streamed bytes.
	big := msg('D', filled(3*initialBufSize+17))
	q := msg('Q', []byte("DELETE FROM t\x00"))
	tail := msg('Z', []byte("I"))
	prefix := []byte("<injected>")
	for _, c := range chunkings {
		t.Run(c.name, func(t *testing.T) {
			_, out, _, err := runPump(t, c.r(msgs(big, q, tail)), 0, inspectTypes("QZ"),
				func(typ byte, body []byte) (verdict, error) {
					if typ == 'Q' {
						return verdict{prefix: prefix, drop: true}, nil
					}
					return verdict{}, nil
				})
			require.ErrorIs(t, err, io.EOF)
			require.True(t, bytes.Equal(msgs(big, prefix, tail), out), "output is not big+prefix+tail")
		})
	}
}

func TestPump_RejectsMessageOverMaxLen(t *testing.T) {
	const maxLen = 100
	earlier := msgs(msg('P', filled(30)), msg('B', filled(95)), msg('E', filled(5)))
	cases := []struct {
		name      string
		typ       byte
		inspected bool
	}{
		{"uninspected", 'd', false},
		{"inspected", 'Q', true},
	}
	for _, tc := range cases {
		for _, c := range chunkings {
			t.Run(tc.name+"/"+c.name, func(t *testing.T) {
				oversized := msg(tc.typ, filled(maxLen-4+1))
				stream := msgs(earlier, oversized, msg('S', nil))
				types := ""
				if tc.inspected {
					types = string(tc.typ)
				}
				_, out, seen, err := runPump(t, c.r(stream), maxLen, inspectTypes(types), nil)

				require.ErrorIs(t, err, ErrMessageTooLarge)
				var tooLarge *TooLargeError
				require.ErrorAs(t, err, &tooLarge)
				assert.Equal(t, TooLargeError{Type: tc.typ, Length: maxLen + 1, Max: maxLen}, *tooLarge)
				assert.Equal(t, earlier, out, "want exactly the messages before the oversized one")
				assert.Empty(t, seen)
			})
		}
	}
}

func TestPump_AcceptsMessageOfExactlyMaxLen(t *testing.T) {
	const maxLen = 100
	stream := msgs(msg('Q', filled(maxLen-4)), msg('d', filled(maxLen-4)))
	for _, c := range chunkings {
		t.Run(c.name, func(t *testing.T) {
			_, out, seen, err := runPump(t, c.r(stream), maxLen, inspectTypes("Q"), nil)
			require.ErrorIs(t, err, io.EOF)
			assert.Equal(t, stream, out)
			assert.Len(t, seen, 1)
		})
	}
}

func TestPump_RejectsImpossibleLength(t *testing.T) {
	earlier := msgs(msg('Q', []byte("SELECT 1\x00")), msg('d', filled(20)))
	cases := []struct {
		name   string
		length uint32
	}{
		{"length 0", 0},
		{"length 1", 1},
		{"length 2", 2},
		{"length 3", 3},
		{"one over PostgreSQL's 1 GB ceiling", maxProtocolLen + 1},
		{"negative as int32", 0x80000000},
		{"all ones", 0xffffffff},
	}
	for _, tc := range cases {
		for _, types := range []string{"", "X"} {
			for _, c := range chunkings {
				t.Run(tc.name+"/inspect="+types+"/"+c.name, func(t *testing.T) {
					stream := msgs(earlier, rawHeader('X', tc.length), filled(10))
					_, out, seen, err := runPump(t, c.r(stream), 0, inspectTypes(types), nil)
					require.ErrorIs(t, err, ErrMalformed)
					assert.NotErrorIs(t, err, ErrMessageTooLarge)
					assert.Equal(t, earlier, out)
					assert.Empty(t, seen)
				})
			}
		}
	}
}

func TestPump_ReturnsEOFAtMessageBoundary(t *testing.T) {
	cases := []struct {
		name   string
		stream []byte
	}{
		{"empty stream", nil},
		{"one empty message", msg('S', nil)},
		{"several messages", msgs(msg('Q', []byte("SELECT 1\x00")), msg('d', filled(initialBufSize*2)), msg('X', nil))},
	}
	for _, tc := range cases {
		for _, types := range []string{"", "QdSX"} {
			for _, c := range chunkings {
				t.Run(tc.name+"/inspect="+types+"/"+c.name, func(t *testing.T) {
					p, out, _, err := runPump(t, c.r(tc.stream), 0, inspectTypes(types), nil)
					require.Equal(t, io.EOF, err)
					assert.Equal(t, len(tc.stream), len(out))
					assert.True(t, bytes.Equal(tc.stream, out))
					assert.True(t, p.atBoundary())
				})
			}
		}
	}
}

func TestPump_ReturnsUnexpectedEOFInsideMessage(t *testing.T) {
	earlier := msgs(msg('Q', []byte("SELECT 1\x00")), msg('S', nil))
	partialBody := msg('d', filled(500))[:200]
	cases := []struct {
		name    string
		tail    []byte
		inspect string
		want    []byte // what reaches dst
	}{
		{"1 byte of a header", []byte{'d'}, "", earlier},
		{"4 bytes of a header", rawHeader('d', 500)[:4], "", earlier},
		{"4 bytes of an inspected header", rawHeader('d', 500)[:4], "d", earlier},
		{"header only of an uninspected message", rawHeader('d', 500), "", msgs(earlier, rawHeader('d', 500))},
		{"part of an uninspected body is streamed", partialBody, "", msgs(earlier, partialBody)},
		{"part of an inspected body is held", partialBody, "d", earlier},
		{"part of a big inspected body is held", msg('d', filled(3*initialBufSize))[:2*initialBufSize], "d", earlier},
	}
	for _, tc := range cases {
		for _, c := range chunkings {
			t.Run(tc.name+"/"+c.name, func(t *testing.T) {
				_, out, _, err := runPump(t, c.r(msgs(earlier, tc.tail)), 0, inspectTypes("QS"+tc.inspect), nil)
				require.Equal(t, io.ErrUnexpectedEOF, err)
				assert.True(t, bytes.Equal(tc.want, out), "forwarded %d bytes, want %d", len(out), len(tc.want))
			})
		}
	}
}

func TestPump_AtBoundary(t *testing.T) {
	complete := msgs(msg('Q', []byte("SELECT 1\x00")), msg('S', nil))
	cases := []struct {
		name    string
		stream  []byte
		inspect string
		maxLen  int
		want    bool
	}{
		{"after complete messages", complete, "", 0, true},
		{"a partial header is not yet forwarded", msgs(complete, []byte{'d', 0, 0}), "", 0, true},
		{"an uninspected message is half forwarded", msgs(complete, msg('d', filled(100))[:50]), "", 0, false},
		{"only the header of an uninspected message is forwarded", msgs(complete, rawHeader('d', 100)), "", 0, false},
		{"an inspected message is held, not forwarded", msgs(complete, msg('d', filled(100))[:50]), "d", 0, true},
		{"a big uninspected message is half forwarded", msgs(complete, msg('d', filled(3*initialBufSize))[:2*initialBufSize]), "", 0, false},
		{"the oversized message was not forwarded", msgs(complete, msg('d', filled(200))), "", 100, true},
		{"the malformed message was not forwarded", msgs(complete, rawHeader('d', 2)), "", 0, true},
	}
	for _, tc := range cases {
		for _, c := range chunkings {
			t.Run(tc.name+"/"+c.name, func(t *testing.T) {
				p, _, _, err := runPump(t, c.r(tc.stream), tc.maxLen, inspectTypes(tc.inspect), nil)
				require.Error(t, err)
				assert.Equal(t, tc.want, p.atBoundary())
			})
		}
	}
	t.Run("new pump", func(t *testing.T) {
		assert.True(t, newPump(bytes.NewReader(nil), io.Discard, 0).atBoundary())
	})
}

func TestPump_ForwardsEarlierMessagesWhenHandlerFails(t *testing.T) {
	errPolicy := errors.New("policy failed")
	earlier := msgs(msg('Q', []byte("SELECT 1\x00")), msg('D', filled(40)))
	stream := msgs(earlier, msg('Q', []byte("SELECT 2\x00")), msg('S', nil))
	for _, c := range chunkings {
		t.Run(c.name, func(t *testing.T) {
			_, out, seen, err := runPump(t, c.r(stream), 0, inspectTypes("Q"), func(typ byte, body []byte) (verdict, error) {
				if string(body) == "SELECT 2\x00" {
					return verdict{}, errPolicy
				}
				return verdict{}, nil
			})
			require.ErrorIs(t, err, errPolicy)
			assert.Equal(t, earlier, out)
			assert.Len(t, seen, 2)
		})
	}
}

type failingWriter struct {
	err   error
	after int // bytes accepted before failing
	n     int
}

func (w *failingWriter) Write(b []byte) (int, error) {
	if w.n+len(b) > w.after {
		return 0, w.err
	}
	w.n += len(b)
	return len(b), nil
}

func TestPump_ReturnsWriteError(t *testing.T) {
	errWrite := errors.New("broken pipe")
	stream := msgs(msg('Q', []byte("SELECT 1\x00")), msg('d', filled(3*initialBufSize)), msg('S', nil))
	cases := []struct {
		name    string
		after   int
		inspect string
		decide  func(byte, []byte) (verdict, error)
	}{
		{"first write", 0, "", nil},
		{"while streaming", initialBufSize, "", nil},
		{"while writing a verdict's prefix", 0, "S", func(byte, []byte) (verdict, error) {
			return verdict{prefix: []byte("x"), drop: true}, nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newPump(bytes.NewReader(stream), &failingWriter{err: errWrite, after: tc.after}, 0)
			p.inspect = inspectTypes(tc.inspect)
			p.handle = tc.decide
			require.ErrorIs(t, p.run(), errWrite)
		})
	}
}

func TestPump_ReturnsReadError(t *testing.T) {
	errRead := errors.New("connection reset")
	stream := msgs(msg('Q', []byte("SELECT 1\x00")), msg('S', nil))
	var out bytes.Buffer
	p := newPump(io.MultiReader(bytes.NewReader(stream), iotest.ErrReader(errRead)), &out, 0)
	require.ErrorIs(t, p.run(), errRead)
	assert.Equal(t, stream, out.Bytes())
}

// burstReader returns the same burst on every read, n times, then io.EOF,
// the way a socket returns one client round trip per read.
type burstReader struct {
	burst []byte
	n     int
}

func (r *burstReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	r.n--
	return copy(p, r.burst), nil
}

// pgbenchBurst is one statement of pgbench -M prepared: Bind with two int4
// parameters, Execute, Sync.
func pgbenchBurst() []byte {
	bind := []byte("\x00P0_1\x00")                    // unnamed portal, statement P0_1
	bind = append(bind, 0, 1, 0, 1)                   // one format code: binary
	bind = append(bind, 0, 2)                         // two parameters
	bind = append(bind, 0, 0, 0, 4, 0, 0, 0x1b, 0x39) // int4 6969
	bind = append(bind, 0, 0, 0, 4, 0, 0, 0, 42)      // int4 42
	bind = append(bind, 0, 1, 0, 1)                   // one result format: binary
	return msgs(msg('B', bind), msg('E', []byte("\x00\x00\x00\x00\x00")), msg('S', nil))
}

// sessionLikeInspect inspects what a session without an Observer inspects.
func sessionLikeInspect(typ byte) bool { return typ == 'S' || typ == 'Q' || typ == 'F' }

func TestPump_HotPathDoesNotAllocate(t *testing.T) {
	burst := pgbenchBurst()
	src := &burstReader{burst: burst}
	p := newPump(src, io.Discard, 64<<20)
	p.inspect = sessionLikeInspect
	syncs := 0
	p.handle = func(byte, []byte) (verdict, error) { syncs++; return verdict{}, nil }
	allocs := testing.AllocsPerRun(20, func() {
		src.n = 100
		if err := p.run(); err != io.EOF {
			t.Fatalf("run: %v", err)
		}
	})
	assert.Zero(t, allocs, "allocations per 100 bursts")
	assert.Equal(t, 21*100, syncs) // AllocsPerRun runs once more to warm up
}

func BenchmarkPump_SmallMessages(b *testing.B) {
	burst := pgbenchBurst()
	cases := []struct {
		name    string
		inspect func(byte) bool
	}{
		{"no observer", sessionLikeInspect},
		{"observer", isObservedClientType},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			src := &burstReader{burst: burst}
			p := newPump(src, io.Discard, 64<<20)
			p.inspect = bc.inspect
			p.handle = func(byte, []byte) (verdict, error) { return verdict{}, nil }
			b.SetBytes(int64(len(burst)))
			b.ReportAllocs()
			src.n = b.N
			b.ResetTimer()
			if err := p.run(); err != io.EOF {
				b.Fatal(err)
			}
		})
	}
}

// TestPump_WritesWhatPrecedesAMessageWhoseHandlerMayWait: with flushFirst
// saying yes for Sync, everything before the Sync is on the wire when its
// handler runs (the server can work while the handler waits); without it,
// the messages of one read go out together after the scan.
func TestPump_WritesWhatPrecedesAMessageWhoseHandlerMayWait(t *testing.T) {
	bind := msg('B', bytes.Repeat([]byte{7}, 100))
	exec := msg('E', []byte("\x00\x00\x00\x00\x00"))
	sync := msg('S', nil)
	stream := msgs(bind, exec, sync)
	for _, flush := range []bool{true, false} {
		var out bytes.Buffer
		p := newPump(bytes.NewReader(stream), &out, 0)
		p.inspect = func(typ byte) bool { return typ == 'S' }
		var atSync []byte
		p.handle = func(typ byte, body []byte) (verdict, error) {
			atSync = append([]byte(nil), out.Bytes()...)
			return verdict{}, nil
		}
		if flush {
			p.flushFirst = func(typ byte) bool { return typ == 'S' }
		}
		require.ErrorIs(t, p.run(), io.EOF)
		require.Equal(t, stream, out.Bytes())
		if flush {
			assert.Equal(t, msgs(bind, exec), atSync, "Bind and Execute were written before the Sync's handler ran")
		} else {
			assert.Empty(t, atSync)
		}
	}
}

// reads returns each chunk from its own Read call.
type reads [][]byte

func (r *reads) Read(b []byte) (int, error) {
	for len(*r) > 0 && len((*r)[0]) == 0 {
		*r = (*r)[1:]
	}
	if len(*r) == 0 {
		return 0, io.EOF
	}
	n := copy(b, (*r)[0])
	(*r)[0] = (*r)[0][n:]
	return n, nil
}

// TestPump_KeepsABigBufferWhileBigMessagesKeepComing: a session sending a
// big Bind per statement reuses one grown buffer; once big messages stop,
// the buffer is given back after keepBigFor reads.
func TestPump_KeepsABigBufferWhileBigMessagesKeepComing(t *testing.T) {
	big := msg('B', filled(100<<10))
	small := msg('S', nil)
	var chunks reads
	for range 3 {
		chunks = append(chunks, big, small)
	}
	p := newPump(&chunks, io.Discard, 0)
	p.inspect = func(typ byte) bool { return typ == 'B' }
	p.handle = func(byte, []byte) (verdict, error) { return verdict{}, nil }
	var bufs []*byte
	for range 6 {
		require.NoError(t, p.fill())
		require.NoError(t, p.scan())
		require.NoError(t, p.flush())
		if len(p.buf) > 4*initialBufSize {
			bufs = append(bufs, &p.buf[0])
		}
	}
	require.NotEmpty(t, bufs)
	for _, b := range bufs {
		assert.Same(t, bufs[0], b, "the grown buffer is reused, not allocated again")
	}

	for range keepBigFor + 1 {
		chunks = append(chunks, small)
	}
	require.ErrorIs(t, p.run(), io.EOF)
	assert.LessOrEqual(t, len(p.buf), 4*initialBufSize, "given back once big messages stopped")
}

// TestPump_StreamsABigMessageWhileAssemblingIt: with stream, a big
// inspected Bind goes out as its chunks arrive; handle still sees it whole,
// before its last chunk is written. Without stream nothing of it is written
// before handle.
func TestPump_StreamsABigMessageWhileAssemblingIt(t *testing.T) {
	parse := msg('P', []byte("\x00INSERT INTO docs VALUES ($1)\x00\x00\x00"))
	bind := msg('B', filled(200<<10))
	sync := msg('S', nil)
	stream := msgs(parse, bind, sync)
	for _, streamed := range []bool{true, false} {
		var out bytes.Buffer
		p := newPump(&chunkReader{data: stream, next: fixedChunks(16 << 10)}, &out, 0)
		p.inspect = func(typ byte) bool { return typ == 'B' || typ == 'S' }
		if streamed {
			p.stream = func(typ byte) bool { return typ == 'B' }
		}
		var atBind int
		p.handle = func(typ byte, body []byte) (verdict, error) {
			if typ == 'B' {
				atBind = out.Len()
				require.Equal(t, bind[headerLen:], body)
			}
			return verdict{}, nil
		}
		require.ErrorIs(t, p.run(), io.EOF)
		require.Equal(t, stream, out.Bytes())
		if streamed {
			assert.Greater(t, atBind, len(parse)+len(bind)-16<<10, "all but the last chunk was forwarded before the Bind was handled")
			assert.Less(t, atBind, len(parse)+len(bind), "handle ran before the Bind's last byte went out")
		} else {
			assert.LessOrEqual(t, atBind, len(parse), "a held message is written after its handler")
		}
	}
}

// TestPump_RefusingAStreamedMessageEndsTheSession: a handler cannot refuse
// what is already on its way to the server; the pump stops with an error
// instead of forwarding half of a message.
func TestPump_RefusingAStreamedMessageEndsTheSession(t *testing.T) {
	bind := msg('B', filled(100<<10))
	var out bytes.Buffer
	p := newPump(&chunkReader{data: msgs(bind, msg('S', nil)), next: fixedChunks(8 << 10)}, &out, 0)
	p.inspect = func(typ byte) bool { return typ == 'B' }
	p.stream = p.inspect
	p.handle = func(byte, []byte) (verdict, error) { return verdict{drop: true}, nil }
	require.ErrorIs(t, p.run(), errRefusedStreamed)
	assert.Less(t, out.Len(), len(bind), "the Bind's last part was not sent")
}
