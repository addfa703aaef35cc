package pgwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"
)

// fuzzInspected are the types FuzzPump's inspector selects.
const fuzzInspected = "QPdSX"

// fuzzPrefix is what FuzzPump's handler puts before Sync in prefix mode.
var fuzzPrefix = []byte("<prefix>")

// fuzzPumpSettings derives everything but the chunk sizes from the seed:
// bits 32-39 choose maxLen, bits 40-47 the largest read, bit 48 dropping
// 'X', bit 49 a prefix before 'S' and bit 50 streaming 'P' and 'd'. There is always a limit: without one
// the pump allocates whatever an inspected header announces, up to 1 GiB,
// which takes up to a second per input and exercises nothing new (the unit
// tests cover maxLen 0).
type fuzzPumpSettings struct {
	maxLen     int
	maxChunk   int
	dropX      bool // verdict{drop: true} for 'X'
	prefixSync bool // verdict{prefix: fuzzPrefix} for 'S'
	stream     bool // pump.stream for 'P' and 'd' (never refused here)
}

func (s fuzzPumpSettings) streams(typ byte) bool { return s.stream && (typ == 'P' || typ == 'd') }

func fuzzSettings(seed uint64) fuzzPumpSettings {
	return fuzzPumpSettings{
		maxLen:     []int{64 << 10, 16, 300, 5000, initialBufSize + 10, 64 << 10, 64 << 10, 1 << 20}[(seed>>32&0xff)%8],
		maxChunk:   []int{1, 3, 7, 64, 1 << 20}[(seed>>40&0xff)%5],
		dropX:      seed>>48&1 != 0,
		prefixSync: seed>>49&1 != 0,
		stream:     seed>>50&1 != 0,
	}
}

// pumpModel is what the pump must do with data, worked out message by
// message without any buffering concerns.
type pumpModel struct {
	out       []byte     // expected output
	inspected []recorded // expected handle calls
	err       error      // expected error (errors.Is)
	maxHeld   int        // largest inspected message whose header was seen
}

func modelPump(data []byte, s fuzzPumpSettings) pumpModel {
	var m pumpModel
	inspect := inspectTypes(fuzzInspected)
	for off := 0; ; {
		rem := data[off:]
		if len(rem) == 0 {
			m.err = io.EOF
			return m
		}
		if len(rem) < headerLen {
			m.err = io.ErrUnexpectedEOF
			return m
		}
		typ := rem[0]
		length := int(binary.BigEndian.Uint32(rem[1:]))
		if length < 4 || length > maxProtocolLen {
			m.err = ErrMalformed
			return m
		}
		if s.maxLen > 0 && length > s.maxLen {
			m.err = ErrMessageTooLarge
			return m
		}
		size := 1 + length
		if inspect(typ) {
			m.maxHeld = max(m.maxHeld, size)
		}
		if size > len(rem) {
			m.err = io.ErrUnexpectedEOF
			if !inspect(typ) || s.streams(typ) {
				m.out = append(m.out, rem...) // streamed as it arrives
			}
			return m
		}
		whole := rem[:size]
		if inspect(typ) {
			m.inspected = append(m.inspected, recorded{typ, whole[headerLen:]})
		}
		switch {
		case typ == 'X' && s.dropX:
		case typ == 'S' && s.prefixSync:
			m.out = append(append(m.out, fuzzPrefix...), whole...)
		default:
			m.out = append(m.out, whole...)
		}
		off += size
	}
}

// fuzzPumpSeeds are realistic streams. testdata/fuzz/FuzzPump holds more,
// as committed files whose seeds also pick limits, read sizes and verdicts.
func fuzzPumpSeeds() [][]byte {
	bind := []byte("\x00stmt1\x00\x00\x01\x00\x01\x00\x00\x00\x0242\x00\x00")
	return [][]byte{
		msg('Q', []byte("SELECT * FROM users WHERE id = 1\x00")),
		msgs(msg('P', []byte("\x00SELECT $1::int\x00\x00\x01\x00\x00\x00\x17")), msg('B', bind),
			msg('D', []byte("P\x00")), msg('E', []byte("\x00\x00\x00\x00\x00")), msg('S', nil)),
		msgs(msg('Q', []byte("COPY t FROM STDIN\x00")), msg('d', []byte("1\tone\n")), msg('d', filled(300)), msg('c', nil)),
		msgs(msg('Q', []byte("SELECT 1\x00")), []byte{'S', 0, 0}),
		msgs(msg('S', nil), rawHeader('Q', 2)),
		msgs(msg('X', nil), msg('S', nil), msg('X', []byte("x"))),
	}
}

// FuzzPump runs the pump over arbitrary bytes cut into reads by seed and
// compares the result with pumpModel: output, handled messages and error
// must be exactly the model's.
func FuzzPump(f *testing.F) {
	for i, s := range fuzzPumpSeeds() {
		f.Add(s, uint64(i)<<40|uint64(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		s := fuzzSettings(seed)
		src := &chunkReader{data: data, next: randomChunks(seed, s.maxChunk)}
		var out bytes.Buffer
		p := newPump(src, &out, s.maxLen)
		var seen []recorded
		p.inspect = inspectTypes(fuzzInspected)
		p.stream = s.streams
		p.handle = func(typ byte, body []byte) (verdict, error) {
			if !p.inspect(typ) {
				t.Fatalf("handle called for uninspected type %q", typ)
			}
			seen = append(seen, recorded{typ, bytes.Clone(body)})
			switch {
			case typ == 'X' && s.dropX:
				return verdict{drop: true}, nil
			case typ == 'S' && s.prefixSync:
				return verdict{prefix: fuzzPrefix}, nil
			}
			return verdict{}, nil
		}
		err := p.run()
		want := modelPump(data, s)

		if !errors.Is(err, want.err) {
			t.Fatalf("run returned %v, want %v", err, want.err)
		}
		if !bytes.Equal(out.Bytes(), want.out) {
			t.Fatalf("output differs from the model:\n got %q\nwant %q", out.Bytes(), want.out)
		}
		if !s.dropX && !s.prefixSync && !bytes.HasPrefix(data, out.Bytes()) {
			t.Fatalf("output is not a prefix of the input")
		}
		if err == nil || errors.Is(err, io.EOF) {
			if !s.dropX && !s.prefixSync && !bytes.Equal(out.Bytes(), data) {
				t.Fatalf("clean end but output differs from input")
			}
		}
		if len(seen) != len(want.inspected) {
			t.Fatalf("handle saw %d messages, want %d", len(seen), len(want.inspected))
		}
		for i := range seen {
			if seen[i].typ != want.inspected[i].typ || !bytes.Equal(seen[i].body, want.inspected[i].body) {
				t.Fatalf("inspected message %d is %q %q, want %q %q", i,
					seen[i].typ, seen[i].body, want.inspected[i].typ, want.inspected[i].body)
			}
		}
		if len(p.buf) > max(initialBufSize, want.maxHeld) {
			t.Fatalf("buffer grew to %d bytes; largest inspected message is %d", len(p.buf), want.maxHeld)
		}
		if errors.Is(err, ErrMalformed) || errors.Is(err, ErrMessageTooLarge) {
			if !p.atBoundary() {
				t.Fatalf("not at a boundary after rejecting a message")
			}
		}
	})
}

// FuzzStartupPacket feeds arbitrary bytes, some of them as an already-read
// prefix, to readStartupPacket.
func FuzzStartupPacket(f *testing.F) {
	startup := func(params ...string) []byte {
		b := binary.BigEndian.AppendUint32(nil, 3<<16)
		for _, p := range params {
			b = append(append(b, p...), 0)
		}
		return withLength(append(b, 0))
	}
	f.Add(startup("user", "alice", "database", "app"), uint8(1))
	f.Add(startup("user", "bob", "options", "-c search_path=x"), uint8(0))
	f.Add(withLength(binary.BigEndian.AppendUint32(nil, sslRequestCode)), uint8(1))
	f.Add(withLength(binary.BigEndian.AppendUint32(nil, gssEncRequestCode)), uint8(4))
	f.Add(withLength(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, cancelRequestCode), 42), 7)), uint8(1))
	f.Add(withLength(binary.BigEndian.AppendUint32(nil, 2<<16)), uint8(1))
	f.Add([]byte{0, 0, 0, 7, 0, 3, 0}, uint8(1))
	f.Add([]byte{0, 0, 0x27, 0x11}, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, prefixLen uint8) {
		n := min(int(prefixLen%5), len(data))
		prefix, rest := data[:n], data[n:]
		r := bytes.NewReader(rest)
		packet, err := readStartupPacket(iotest.HalfReader(r), prefix)

		if len(data) < 4 {
			if err == nil {
				t.Fatalf("accepted a packet from %d bytes", len(data))
			}
			return
		}
		length := int(binary.BigEndian.Uint32(data))
		var ce *clientError
		switch {
		case length < 8 || length > maxStartupPacket:
			if !errors.As(err, &ce) {
				t.Fatalf("length %d: got %v, want a clientError", length, err)
			}
			if r.Len() != len(rest)-max(0, 4-n) {
				t.Fatalf("read past the length word of an invalid packet")
			}
			return
		case len(data) < length:
			if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
				t.Fatalf("truncated packet: got %v", err)
			}
			return
		}
		if r.Len() != len(data)-length {
			t.Fatalf("read %d bytes past the packet", len(data)-length-r.Len())
		}
		version := binary.BigEndian.Uint32(data[4:])
		if major := version >> 16; major != 3 && major != 1234 {
			if !errors.As(err, &ce) || ce.fields.Code != "0A000" {
				t.Fatalf("protocol %d.%d: got %v, want an unsupported-protocol clientError", major, version&0xffff, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("valid packet refused: %v", err)
		}
		if !bytes.Equal(packet, data[4:length]) {
			t.Fatalf("packet %q, want %q", packet, data[4:length])
		}
	})
}

// splitMechanisms splits an AuthenticationSASL body after the code into its
// NUL-terminated strings; ok is false when the last one lacks its NUL.
func splitMechanisms(list []byte) (mechs []string, ok bool) {
	for len(list) > 0 {
		i := bytes.IndexByte(list, 0)
		if i < 0 {
			return mechs, false
		}
		mechs = append(mechs, string(list[:i]))
		list = list[i+1:]
	}
	return mechs, true
}

func FuzzWithoutChannelBinding(f *testing.F) {
	sasl := func(mechs ...string) []byte {
		b := binary.BigEndian.AppendUint32(nil, authSASL)
		for _, m := range mechs {
			b = append(append(b, m...), 0)
		}
		return append(b, 0)
	}
	f.Add(sasl("SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"))
	f.Add(sasl("SCRAM-SHA-256", "SCRAM-SHA-256-PLUS"))
	f.Add(sasl("SCRAM-SHA-256-PLUS"))
	f.Add(sasl("SCRAM-SHA-256"))
	f.Add(append(sasl("SCRAM-SHA-256-PLUS"), "SCRAM-SHA-256-PLUS"...))
	f.Add([]byte{0, 0, 0, 10})
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) < 4 {
			t.Skip("relayAuth rejects shorter authentication requests before this is called")
		}
		in := bytes.Clone(body)
		out := withoutChannelBinding(body)
		if !bytes.Equal(body, in) {
			t.Fatalf("input modified")
		}
		mechs, ok := splitMechanisms(body[4:])
		if !ok {
			if !bytes.Equal(out, body) {
				t.Fatalf("malformed body changed: %q -> %q", body, out)
			}
			return
		}
		if !bytes.Equal(out[:4], body[:4]) {
			t.Fatalf("authentication code changed")
		}
		got, ok := splitMechanisms(out[4:])
		if !ok {
			t.Fatalf("output %q is not a list of NUL-terminated strings", out)
		}
		var want []string
		for _, m := range mechs {
			if m != scramPlusMechanism {
				want = append(want, m)
			}
		}
		require.Equal(t, want, got)
	})
}

func FuzzScramFlag(f *testing.F) {
	initial := func(mech, data string) []byte {
		b := append([]byte(mech), 0)
		b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
		return append(b, data...)
	}
	f.Add(initial("SCRAM-SHA-256", "n,,n=,r=abc"))
	f.Add(initial("SCRAM-SHA-256", "y,,n=,r=abc"))
	f.Add(initial("SCRAM-SHA-256-PLUS", "p=tls-server-end-point,,n=,r=abc"))
	f.Add([]byte("SCRAM-SHA-256\x00\xff\xff\xff\xff"))
	f.Add([]byte("password\x00"))
	f.Fuzz(func(t *testing.T, body []byte) {
		flag := scramFlag(body)
		i := bytes.IndexByte(body, 0)
		switch {
		case i < 0 || len(body) < i+6:
			if flag != 0 {
				t.Fatalf("flag %q from a body without a client-first-message", flag)
			}
		case flag != body[i+5]:
			t.Fatalf("flag %q, want the first byte after mechanism and length, %q", flag, body[i+5])
		}
	})
}

func FuzzErrorField(f *testing.F) {
	f.Add([]byte("SFATAL\x00C28P01\x00Mpassword authentication failed\x00\x00"), byte('M'), "code", "message")
	f.Add([]byte("M\x00"), byte('C'), "", "")
	f.Add([]byte("Cx"), byte('C'), "LT000", "refused: it's \"quoted\"")
	f.Fuzz(func(t *testing.T, body []byte, field byte, code, message string) {
		v := errorField(body, field)
		if bytes.IndexByte([]byte(v), 0) >= 0 {
			t.Fatalf("field value %q contains NUL", v)
		}
		if v != "" && !bytes.Contains(body, append([]byte{field}, v...)) {
			t.Fatalf("value %q is not in the body", v)
		}

		// Whatever pgproto3 encodes, errorField reads back.
		code = string(bytes.ReplaceAll([]byte(code), []byte{0}, nil))
		message = string(bytes.ReplaceAll([]byte(message), []byte{0}, nil))
		e := pgproto3.ErrorResponse{Severity: "ERROR", Code: code, Message: message, Detail: "d"}
		enc, err := e.Encode(nil)
		require.NoError(t, err)
		encBody := enc[headerLen:]
		if code != "" {
			require.Equal(t, code, errorField(encBody, 'C'))
		}
		if message != "" {
			require.Equal(t, message, errorField(encBody, 'M'))
		}
		require.Equal(t, "d", errorField(encBody, 'D'))
		require.Equal(t, "", errorField(encBody, 'H'))
	})
}
