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

// decodeEntries is the inverse of encodeEntries. A nil or empty blob is an
// intent without entries.
func decodeEntries(b []byte) ([]Entry, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if b[0] != blobVersion {
		return nil, fmt.Errorf("%w: version %d", errBadBlob, b[0])
	}
	b = b[1:]
	count, k := binary.Uvarint(b)
	if k <= 0 || count > uint64(len(b)) { // every entry takes at least 2 bytes
		return nil, errBadBlob
	}
	b = b[k:]
	if count == 0 {
		return nil, nil
	}
	str := func() (string, bool) {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return "", false
		}
		s := string(b[k : k+int(l)])
		b = b[k+int(l):]
		return s, true
	}
	out := make([]Entry, count)
	var store, table string
	for i := range out {
		if len(b) == 0 {
			return nil, errBadBlob
		}
		flags := b[0]
		b = b[1:]
		ok := true
		if flags&flagSameStore == 0 {
			var s string
			s, ok = str()
			store = s
		}
		if ok && flags&flagSameTable == 0 {
			table, ok = str()
		}
		var id string
		if ok {
			id, ok = str()
		}
		if !ok {
			return nil, errBadBlob
		}
		e := Entry{Store: Store(store), Table: table, RecordID: id, Unattributed: flags&flagUnattributed != 0}
		if !e.Unattributed {
			if len(b) < len(e.Subject) {
				return nil, errBadBlob
			}
			copy(e.Subject[:], b)
			b = b[len(e.Subject):]
		}
		out[i] = e
	}
	if len(b) != 0 {
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
	b = b[1:]
	uvarint := func() (uint64, bool) {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return 0, false
		}
		b = b[k:]
		return v, true
	}
	str := func() (string, bool) {
		l, ok := uvarint()
		if !ok || l > uint64(len(b)) {
			return "", false
		}
		s := string(b[:l])
		b = b[l:]
		return s, true
	}
	count, ok := uvarint()
	if !ok || count > uint64(len(b)) { // every change takes at least 2 bytes
		return nil, errBadChanges
	}
	out := make([]Change, count)
	var store, table string
	for i := range out {
		if len(b) == 0 {
			return nil, errBadChanges
		}
		head := b[0]
		b = b[1:]
		ok := head&^(changeKindMask|changeSameStore|changeSameTable) == 0 && (i > 0 || head&(changeSameStore|changeSameTable) == 0)
		if ok && head&changeSameStore == 0 {
			store, ok = str()
		}
		if ok && head&changeSameTable == 0 {
			table, ok = str()
		}
		c := Change{Kind: ChangeKind(head & changeKindMask), Store: Store(store), Table: table}
		if ok {
			c.RecordID, ok = str()
		}
		if ok && c.Kind == ChangeWrite {
			var n uint64
			n, ok = uvarint()
			size := uint64(len(SubjectHash{}))
			if ok = ok && n <= uint64(len(b))/size; ok {
				c.Subjects = make([]SubjectHash, n)
				for j := range c.Subjects {
					copy(c.Subjects[j][:], b)
					b = b[size:]
				}
			}
		}
		if !ok || validChange(c) != nil {
			return nil, errBadChanges
		}
		out[i] = c
	}
	if len(b) != 0 {
		return nil, errBadChanges
	}
	return out, nil
}
