package pgwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// headerLen is the size of a regular message header: a type byte and an
// int32 length that counts itself but not the type byte.
const headerLen = 5

// directGrowth is the largest message the buffer grows to in one step once
// part of it has arrived (a Bind of 100 1536-dimension vectors is ~600 KB).
const directGrowth = 4 << 20

// initialBufSize fits a typical burst of small messages (a pgbench
// transaction is well under 1 KiB) while keeping per-connection memory low.
const initialBufSize = 16 << 10

// keepBigFor is how many reads a grown buffer survives without a big
// message.
const keepBigFor = 32

// ErrMessageTooLarge is returned when a peer announces a message longer than
// the configured maximum.
var ErrMessageTooLarge = errors.New("message exceeds the configured maximum size")

// errRefusedStreamed is returned when a handler refuses or alters a message
// that was already forwarded as it arrived (see pump.stream): a bug in the
// Observer, which closes the session rather than relay a half-refused one.
var errRefusedStreamed = errors.New("observer refused a message already forwarded as it arrived")

// ErrMalformed is returned when a message header announces an impossible length.
var ErrMalformed = errors.New("malformed message header")

// verdict is what an inspector decides about one whole message.
type verdict struct {
	prefix []byte // written before the message (or instead of it, with drop)
	drop   bool   // the message itself is not forwarded
}

// pump moves framed messages from src to dst. It reads whatever the socket
// holds, walks the headers, and forwards the same buffer slice with one
// write. Messages whose type inspect selects are held until complete and
// passed to handle; all other messages stream through, however large, without
// being buffered whole.
type pump struct {
	src io.Reader
	dst io.Writer

	buf             []byte
	scanned, filled int // buf[scanned:filled] has been read but not yet scanned
	unsent          int // buf[unsent:scanned] is scanned and waiting to be written
	rest            int // bytes of a streamed message that are still to arrive
	need            int // size of the inspected message being assembled at p.scanned
	// bigIdle counts reads with an empty grown buffer since a message last
	// needed it (see fill).
	bigIdle int

	maxLen  int // largest accepted message (type byte excluded); 0 = no limit
	inspect func(typ byte) bool
	handle  func(typ byte, body []byte) (verdict, error)
	// flushFirst, when set and true for a message about to be handled,
	// has what precedes it written first: its handler may wait.
	flushFirst func(typ byte) bool
	// stream, when set and true for an inspected message that has not
	// fully arrived, has it forwarded as it arrives while it is still
	// assembled for handle, which then sees it whole but can no longer
	// refuse it. A 600 KB vector Bind then reaches the server while the
	// client is still sending it, instead of after its last byte.
	stream func(typ byte) bool
	tee    bool // the incomplete message at p.scanned is being streamed (buf[scanned:unsent] is written)
	// dstFailed: run ended because writing to dst failed, not reading src.
	dstFailed bool
}

func newPump(src io.Reader, dst io.Writer, maxLen int) *pump {
	return &pump{src: src, dst: dst, buf: make([]byte, initialBufSize), maxLen: maxLen}
}

// run pumps until src or dst fails. The error is io.EOF when src closed
// cleanly between messages.
func (p *pump) run() error {
	for {
		if err := p.fill(); err != nil {
			return err
		}
		if err := p.scan(); err != nil {
			p.flush() // what was scanned before the bad message is still valid
			return err
		}
		if err := p.flush(); err != nil {
			return err
		}
	}
}

// atBoundary reports whether everything forwarded so far ends on a message
// boundary, so that a message of our own may be written to dst.
func (p *pump) atBoundary() bool {
	return p.rest == 0 && p.unsent == p.scanned
}

func (p *pump) fill() error {
	if p.scanned == p.filled {
		p.scanned, p.filled, p.unsent = 0, 0, 0
		if len(p.buf) > 4*initialBufSize {
			// A big inspected message grew the buffer. Keep it while big
			// messages keep coming (a 600 KB vector Bind per statement
			// would otherwise allocate and clear 600 KB each time, work
			// for the garbage collector); give it back after keepBigFor
			// reads that did not need it.
			if p.bigIdle++; p.bigIdle > keepBigFor {
				p.buf, p.bigIdle = make([]byte, initialBufSize), 0
			}
		}
	}
	if p.filled == len(p.buf) {
		p.makeRoom()
	}
	n, err := p.src.Read(p.buf[p.filled:])
	p.filled += n
	if n > 0 {
		return nil
	}
	if err == io.EOF && (p.scanned != p.filled || p.rest != 0) {
		return io.ErrUnexpectedEOF
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// scan advances p.scanned over every complete message (and every streamable piece)
// in buf[p.scanned:p.filled], handing inspected messages to handle.
func (p *pump) scan() error {
	for {
		if p.rest > 0 {
			n := min(p.rest, p.filled-p.scanned)
			p.scanned += n
			p.rest -= n
			if p.rest > 0 {
				return nil
			}
		}
		avail := p.filled - p.scanned
		if avail < headerLen {
			return nil
		}
		typ := p.buf[p.scanned]
		length := int(binary.BigEndian.Uint32(p.buf[p.scanned+1:]))
		if length < 4 || length > maxProtocolLen {
			return fmt.Errorf("%w: type %q, length %d", ErrMalformed, typ, length)
		}
		if p.maxLen > 0 && length > p.maxLen {
			return &TooLargeError{Type: typ, Length: length, Max: p.maxLen}
		}
		size := 1 + length
		if p.inspect == nil || !p.inspect(typ) {
			if size <= avail {
				p.scanned += size
				continue
			}
			p.scanned = p.filled
			p.rest = size - avail
			return nil
		}
		if size > avail {
			p.reserve(size)
			p.tee = p.stream != nil && p.stream(typ)
			return nil
		}
		if p.flushFirst != nil && p.unsent < p.scanned && p.flushFirst(typ) {
			if err := p.flush(); err != nil {
				return err
			}
		}
		teed := p.tee
		p.tee = false
		v, err := p.handle(typ, p.buf[p.scanned+headerLen:p.scanned+size])
		if err != nil {
			return err
		}
		if teed && (v.prefix != nil || v.drop) {
			return fmt.Errorf("%w: type %q", errRefusedStreamed, typ)
		}
		if v.prefix == nil && !v.drop {
			p.scanned += size
			continue
		}
		if err := p.splice(v, size); err != nil {
			return err
		}
	}
}

// splice writes what is scanned, then the verdict's prefix, then (unless
// dropped) the message at p.scanned.
func (p *pump) splice(v verdict, size int) error {
	if err := p.flush(); err != nil {
		return err
	}
	if len(v.prefix) > 0 {
		if err := p.write(v.prefix); err != nil {
			return err
		}
	}
	p.scanned += size
	if v.drop {
		p.unsent = p.scanned
	}
	return nil
}

// reserve notes that the inspected message at p.scanned needs size bytes. The
// buffer grows only as the message actually arrives (see makeRoom), so a
// 5-byte header alone cannot make the proxy allocate max_message_size.
func (p *pump) reserve(size int) {
	p.need = size
	if size > 4*initialBufSize {
		p.bigIdle = 0
	}
}

// makeRoom is called when the buffer is full: it moves the unscanned tail
// (a partial message) to the front and, if that is not enough for the
// message being assembled, doubles the buffer up to the message's size.
func (p *pump) makeRoom() {
	if p.scanned > 0 {
		n := copy(p.buf, p.buf[p.scanned:p.filled])
		p.unsent -= p.scanned // p.scanned outside a streamed message; further inside one
		p.scanned, p.filled = 0, n
	}
	if p.filled < len(p.buf) {
		return
	}
	size := 2 * len(p.buf)
	if p.need > len(p.buf) && (p.need < size || p.need <= directGrowth) {
		// Up to directGrowth, grow once to the whole message rather than
		// doubling (and copying) several times; beyond it, grow only as the
		// data arrives.
		size = p.need
	}
	buf := make([]byte, size)
	copy(buf, p.buf[:p.filled])
	p.buf = buf
}

func (p *pump) flush() error {
	end := p.scanned
	if p.tee {
		end = p.filled // the streamed message, as far as it has arrived
	}
	if p.unsent >= end {
		return nil
	}
	err := p.write(p.buf[p.unsent:end])
	p.unsent = end
	return err
}

func (p *pump) write(b []byte) error {
	_, err := p.dst.Write(b)
	if err != nil {
		p.dstFailed = true
	}
	return err
}

// maxProtocolLen is PostgreSQL's own ceiling for one message (1 GB - 1,
// PQ_LARGE_MESSAGE_LIMIT); anything longer is a framing error, not data.
const maxProtocolLen = 1<<30 - 1

// TooLargeError reports a message over the configured maximum size.
type TooLargeError struct {
	Type   byte
	Length int
	Max    int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("message %q of %d bytes exceeds max_message_size (%d bytes)", e.Type, e.Length, e.Max)
}

func (e *TooLargeError) Unwrap() error { return ErrMessageTooLarge }
