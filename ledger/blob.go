package ledger

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
)

// The SQLite backend keeps a pending intent's entries as one blob in
// intents.entries rather than one indexed row per entry: Intend, on the
// proxy's hot path, then writes one row whatever the statement's size.
//
// Format (version 1): the byte 1, uvarint entry count, then per entry a
// flags byte, the store and table (each uvarint length and bytes, omitted
// when equal to the previous entry's), the record id (uvarint length and
// bytes) and, unless unattributed, the 32-byte subject hash.
const (
	blobVersion = 1

	flagUnattributed = 1 << 0
	flagSameStore    = 1 << 1
	flagSameTable    = 1 << 2
)

func encodeEntries(entries []Entry) []byte {
	n := 2 + binary.MaxVarintLen64
	for _, e := range entries {
		n += 1 + 3*binary.MaxVarintLen64 + len(e.Store) + len(e.Table) + len(e.RecordID) + len(e.Subject)
	}
	b := make([]byte, 0, n)
	b = append(b, blobVersion)
	b = binary.AppendUvarint(b, uint64(len(entries)))
	for i, e := range entries {
		var flags byte
		if e.Unattributed {
			flags |= flagUnattributed
		}
		if i > 0 && e.Store == entries[i-1].Store {
			flags |= flagSameStore
		}
		if i > 0 && e.Table == entries[i-1].Table {
			flags |= flagSameTable
		}
		b = append(b, flags)
		if flags&flagSameStore == 0 {
			b = binary.AppendUvarint(b, uint64(len(e.Store)))
			b = append(b, e.Store...)
		}
		if flags&flagSameTable == 0 {
			b = binary.AppendUvarint(b, uint64(len(e.Table)))
			b = append(b, e.Table...)
		}
		b = binary.AppendUvarint(b, uint64(len(e.RecordID)))
		b = append(b, e.RecordID...)
		if !e.Unattributed {
			b = append(b, e.Subject[:]...)
		}
	}
	return b
}

var errBadBlob = errors.New("ledger: corrupt pending-entries blob")

// blobReader reads the parts of a blob. ok turns false at the first part
// that runs past the end, and every later read returns zero values.
type blobReader struct {
	b  []byte
	ok bool
}

func (r *blobReader) byte1() byte {
	if !r.ok || len(r.b) == 0 {
		r.ok = false
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *blobReader) uvarint() uint64 {
	if !r.ok {
		return 0
	}
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.ok = false
		return 0
	}
	r.b = r.b[k:]
	return v
}

// take returns the next n bytes, which alias the blob.
func (r *blobReader) take(n uint64) []byte {
	if !r.ok || n > uint64(len(r.b)) {
		r.ok = false
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

// str reads a uvarint length and that many bytes.
func (r *blobReader) str() string { return string(r.take(r.uvarint())) }

// count reads a uvarint count of parts, each at least least bytes long,
// checked against what is left.
func (r *blobReader) count(least int) uint64 {
	n := r.uvarint()
	if n > uint64(len(r.b)/least) {
		r.ok = false
		return 0
	}
	return n
}

// done reports whether every part was read and nothing is left.
func (r *blobReader) done() bool { return r.ok && len(r.b) == 0 }

// decodeEntries is the inverse of encodeEntries. A nil or empty blob is an
// intent without entries.
func decodeEntries(b []byte) ([]Entry, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if b[0] != blobVersion {
		return nil, fmt.Errorf("%w: version %d", errBadBlob, b[0])
	}
	r := &blobReader{b: b[1:], ok: true}
	n := r.count(2)
	if !r.ok {
		return nil, errBadBlob
	}
	if n == 0 {
		return nil, nil
	}
	out := make([]Entry, n)
	var store, table string
	for i := range out {
		flags := r.byte1()
		if flags&flagSameStore == 0 {
			store = r.str()
		}
		if flags&flagSameTable == 0 {
			table = r.str()
		}
		e := Entry{Store: Store(store), Table: table, RecordID: r.str(), Unattributed: flags&flagUnattributed != 0}
		if !e.Unattributed {
			copy(e.Subject[:], r.take(uint64(len(e.Subject))))
		}
		if !r.ok {
			return nil, errBadBlob
		}
		out[i] = e
	}
	if !r.done() {
		return nil, errBadBlob
	}
	return out, nil
}

// entriesJSON renders entries as the JSON array SQLite's confirm statement
// reads: [store, table, record id, hex subject, 0|1] per entry.
func entriesJSON(entries []Entry) string {
	b := make([]byte, 0, len(entries)*(len(entries[0].Table)+len(entries[0].RecordID)+96))
	b = append(b, '[')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendJSONString(b, string(e.Store))
		b = append(b, ',')
		b = appendJSONString(b, e.Table)
		b = append(b, ',')
		b = appendJSONString(b, e.RecordID)
		b = append(b, ',', '"')
		b = hex.AppendEncode(b, e.Subject[:])
		b = append(b, '"', ',', '0')
		if e.Unattributed {
			b[len(b)-1] = '1'
		}
		b = append(b, ']')
	}
	return string(append(b, ']'))
}

// appendJSONString appends s as a JSON string. Bytes are kept as they are
// (json.Marshal would replace invalid UTF-8, changing a record id); only
// the quote, the backslash and control bytes are escaped, which is all
// SQLite's JSON reader requires.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// The SQLite backend keeps the WAL follower's changes as one blob per
// Observe until they are written into entries (sqlite_observed.go).
//
// Format (version 1): the byte 1, uvarint change count, then per change a
// byte holding its kind (ChangeWrite, ChangeDelete, ChangeTruncate) and
// the same-store and same-table flags below, the store and table (as in
// encodeEntries), the record id (uvarint length and bytes), and for a
// write a uvarint subject count and the 32-byte subject hashes.
const (
	changeKindMask  = 3
	changeSameStore = 1 << 2
	changeSameTable = 1 << 3
)

func encodeChanges(changes []Change) []byte {
	n := 2 + binary.MaxVarintLen64
	for _, c := range changes {
		n += 1 + 4*binary.MaxVarintLen64 + len(c.Store) + len(c.Table) + len(c.RecordID) + len(c.Subjects)*len(SubjectHash{})
	}
	b := make([]byte, 0, n)
	b = append(b, blobVersion)
	b = binary.AppendUvarint(b, uint64(len(changes)))
	for i, c := range changes {
		head := byte(c.Kind) & changeKindMask
		sameStore := i > 0 && c.Store == changes[i-1].Store
		sameTable := i > 0 && c.Table == changes[i-1].Table
		if sameStore {
			head |= changeSameStore
		}
		if sameTable {
			head |= changeSameTable
		}
		b = append(b, head)
		if !sameStore {
			b = binary.AppendUvarint(b, uint64(len(c.Store)))
			b = append(b, c.Store...)
		}
		if !sameTable {
			b = binary.AppendUvarint(b, uint64(len(c.Table)))
			b = append(b, c.Table...)
		}
		b = binary.AppendUvarint(b, uint64(len(c.RecordID)))
		b = append(b, c.RecordID...)
		if c.Kind == ChangeWrite {
			b = binary.AppendUvarint(b, uint64(len(c.Subjects)))
			for _, s := range c.Subjects {
				b = append(b, s[:]...)
			}
		}
	}
	return b
}

var errBadChanges = errors.New("ledger: corrupt observed-changes blob")

// decodeChanges is the inverse of encodeChanges. Every length and count
// is checked against the blob before it is used.
func decodeChanges(b []byte) ([]Change, error) {
	if len(b) == 0 || b[0] != blobVersion {
		return nil, errBadChanges
	}
	r := &blobReader{b: b[1:], ok: true}
	out := make([]Change, r.count(2))
	var store, table string
	for i := range out {
		head := r.byte1()
		first := i == 0 && head&(changeSameStore|changeSameTable) != 0
		if head&^(changeKindMask|changeSameStore|changeSameTable) != 0 || first {
			return nil, errBadChanges
		}
		if head&changeSameStore == 0 {
			store = r.str()
		}
		if head&changeSameTable == 0 {
			table = r.str()
		}
		c := Change{Kind: ChangeKind(head & changeKindMask), Store: Store(store), Table: table, RecordID: r.str()}
		if c.Kind == ChangeWrite {
			size := len(SubjectHash{})
			c.Subjects = make([]SubjectHash, r.count(size))
			for j := range c.Subjects {
				copy(c.Subjects[j][:], r.take(uint64(size)))
			}
		}
		if !r.ok || validChange(c) != nil {
			return nil, errBadChanges
		}
		out[i] = c
	}
	if !r.done() {
		return nil, errBadChanges
	}
	return out, nil
}
