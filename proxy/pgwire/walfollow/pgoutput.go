package walfollow

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The pgoutput messages the follower reads (protocol version 1, see
// PostgreSQL's "Logical Replication Message Formats"). Every length and
// count is checked against the message before it is used, so a malformed
// message is an error and never a panic or a large allocation.

// errMalformed wraps messages the follower cannot read.
var errMalformed = errors.New("walfollow: malformed pgoutput message")

// column is one value of a row: its kind ('n' NULL, 'u' unchanged TOASTed
// value, 't' text, 'b' binary) and its bytes, which alias the message.
type column struct {
	kind byte
	data []byte
}

// message is one decoded pgoutput message; a reader reuses it.
type message struct {
	kind     byte   // 'B', 'C', 'R', 'I', 'U', 'D', 'T'; others are skipped
	relation uint32 // R, I, U, D

	commitEnd uint64 // C: the end of the transaction (its LSN to confirm)

	schema, name string   // R
	columns      []string // R: column names in tuple order

	old, new []column // I: new; U: old (when sent) and new; D: old
	hasOld   bool

	truncated []uint32 // T
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", errMalformed, what)
	}
}

func (r *reader) take(n int, what string) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		r.fail(what + " runs past the end of the message")
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) byte1(what string) byte {
	if b := r.take(1, what); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) uint16(what string) int {
	if b := r.take(2, what); b != nil {
		return int(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reader) uint32(what string) uint32 {
	if b := r.take(4, what); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (r *reader) uint64(what string) uint64 {
	if b := r.take(8, what); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

func (r *reader) cstring(what string) string {
	for i, c := range r.b {
		if c == 0 {
			s := string(r.b[:i])
			r.b = r.b[i+1:]
			return s
		}
	}
	r.fail(what + " has no terminating zero byte")
	return ""
}

// tuple reads a TupleData into dst.
func (r *reader) tuple(dst []column) []column {
	n := r.uint16("a tuple's column count")
	if n > len(r.b) { // each column takes at least its kind byte
		r.fail("a tuple's column count exceeds the message")
		return dst[:0]
	}
	dst = dst[:0]
	for i := 0; i < n && r.err == nil; i++ {
		c := column{kind: r.byte1("a column's kind")}
		switch c.kind {
		case 'n', 'u':
		case 't', 'b':
			c.data = r.take(int(r.uint32("a column's length")), "a column's value")
		default:
			r.fail(fmt.Sprintf("unknown column kind %q", c.kind))
		}
		dst = append(dst, c)
	}
	return dst
}

// decode reads data into m.
func (m *message) decode(data []byte) error {
	r := &reader{b: data}
	m.kind = r.byte1("the message type")
	m.hasOld = false
	switch m.kind {
	case 'B':
		r.take(20, "Begin")
	case 'C':
		r.byte1("Commit's flags")
		r.uint64("Commit's LSN")
		m.commitEnd = r.uint64("Commit's end LSN")
		r.uint64("Commit's time")
	case 'R':
		m.relation = r.uint32("Relation's id")
		m.schema = r.cstring("Relation's schema")
		m.name = r.cstring("Relation's name")
		r.byte1("Relation's replica identity")
		n := r.uint16("Relation's column count")
		if n > len(r.b)/10 { // flags, name's zero byte, type, modifier
			r.fail("Relation's column count exceeds the message")
			break
		}
		m.columns = m.columns[:0]
		for i := 0; i < n && r.err == nil; i++ {
			r.byte1("a column's flags")
			m.columns = append(m.columns, r.cstring("a column's name"))
			r.take(8, "a column's type")
		}
	case 'I':
		m.relation = r.uint32("Insert's relation")
		if r.byte1("Insert's tuple marker") != 'N' && r.err == nil {
			r.fail("Insert without a new tuple")
		}
		m.new = r.tuple(m.new)
	case 'U':
		m.relation = r.uint32("Update's relation")
		marker := r.byte1("Update's tuple marker")
		if marker == 'K' || marker == 'O' {
			m.old, m.hasOld = r.tuple(m.old), true
			marker = r.byte1("Update's tuple marker")
		}
		if marker != 'N' && r.err == nil {
			r.fail("Update without a new tuple")
		}
		m.new = r.tuple(m.new)
	case 'D':
		m.relation = r.uint32("Delete's relation")
		if marker := r.byte1("Delete's tuple marker"); marker != 'K' && marker != 'O' && r.err == nil {
			r.fail("Delete without an old tuple")
		}
		m.old, m.hasOld = r.tuple(m.old), true
	case 'T':
		n := int(r.uint32("Truncate's relation count"))
		r.byte1("Truncate's options")
		if n > len(r.b)/4 {
			r.fail("Truncate's relation count exceeds the message")
			break
		}
		m.truncated = m.truncated[:0]
		for i := 0; i < n; i++ {
			m.truncated = append(m.truncated, r.uint32("a truncated relation"))
		}
	case 'O', 'Y', 'M':
		// Origin, Type, logical decoding message: nothing to record.
	default:
		if r.err == nil {
			r.fail(fmt.Sprintf("unknown message type %q", m.kind))
		}
	}
	return r.err
}
