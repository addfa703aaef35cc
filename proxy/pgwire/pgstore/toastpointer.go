package pgstore

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Heap page and TOAST pointer layout, as PostgreSQL 15 lays them out on a
// little-endian server (bufpage.h, itemid.h, htup_details.h, and
// postgres.h, which PostgreSQL 16 moved to varatt.h):
//   - the page header is 24 bytes; pd_lower (uint16 at byte 12) ends the
//     line pointer array, which starts at byte 24, 4 bytes per pointer;
//   - a line pointer is a uint32 with lp_off in bits 0-14, lp_flags in
//     bits 15-16 (1 = LP_NORMAL, a tuple is stored there) and lp_len in
//     bits 17-31; tuples are numbered from 1 (a ctid's second number);
//   - a heap tuple's header is at least 23 bytes and t_hoff (byte 22) is
//     where its attributes start;
//   - an out-of-line value is an 18-byte TOAST pointer, never aligned: a
//     1-byte header 0x01 (a short varlena of length 0, which no other
//     value has), the tag 18 (VARTAG_ONDISK), then varatt_external: int32
//     va_rawsize (the value's size with its 4-byte header), uint32
//     va_extinfo (the stored size in its low 30 bits, the compression
//     method in the top 2), Oid va_valueid (the chunk_id of the value's
//     chunks in the TOAST table), Oid va_toastrelid (that TOAST table).
const (
	pageHeaderLen     = 24
	pdLowerAt         = 12
	linePointerLen    = 4
	lpNormal          = 1
	heapTupleHeader   = 23
	tHoffAt           = 22
	toastPointerLen   = 18
	toastPointerByte  = 0x01
	vartagOnDisk      = 18
	varHeaderLen      = 4
	extSizeBits       = 30
	toastValueIDAt    = 10
	toastRelationIDAt = 14
)

// errPageUnreadable is returned for bytes that are not a heap page.
var errPageUnreadable = errors.New("not a heap page")

// toastValueIDs returns the va_valueid of every TOAST pointer into the
// TOAST table toastRelation held by the tuples at the line pointers lines
// (1-based, a ctid's second number) of the heap page page, and how many of
// lines held no tuple (unused, redirected or dead pointers, or past the
// array: the row was moved or pruned since its ctid was read).
//
// A pointer is recognised by its first two bytes, its TOAST table's oid,
// and sizes that can be true (a stored size of at least 1 byte and no
// more than the raw size less its header), anywhere in the tuple's
// attributes: decoding the attributes would need the table's row type at
// the time of the read, and bytes of another value that happen to look
// like a pointer only add a chunk_id to look up. Pointers into another
// TOAST table and values stored inline (compressed or not, which start
// with another header byte) are not returned.
func toastValueIDs(page []byte, lines []uint16, toastRelation uint32) (ids []uint32, missing int, err error) {
	if len(page) < pageHeaderLen {
		return nil, 0, fmt.Errorf("%w: %d bytes, shorter than a page header", errPageUnreadable, len(page))
	}
	lower := int(binary.LittleEndian.Uint16(page[pdLowerAt:]))
	if lower < pageHeaderLen || lower > len(page) || (lower-pageHeaderLen)%linePointerLen != 0 {
		return nil, 0, fmt.Errorf("%w: pd_lower %d does not end a line pointer array within %d bytes", errPageUnreadable, lower, len(page))
	}
	count := (lower - pageHeaderLen) / linePointerLen
	for _, line := range lines {
		if line == 0 || int(line) > count {
			missing++
			continue
		}
		lp := binary.LittleEndian.Uint32(page[pageHeaderLen+linePointerLen*(int(line)-1):])
		off, flags, size := int(lp&0x7fff), (lp>>15)&3, int(lp>>17)
		if flags != lpNormal || size < heapTupleHeader || off+size > len(page) {
			missing++
			continue
		}
		tuple := page[off : off+size]
		hoff := int(tuple[tHoffAt])
		if hoff < heapTupleHeader || hoff > size {
			missing++
			continue
		}
		ids = append(ids, pointersIn(tuple[hoff:], toastRelation)...)
	}
	return ids, missing, nil
}

// pointersIn returns the va_valueid of every TOAST pointer into
// toastRelation found in data.
func pointersIn(data []byte, toastRelation uint32) []uint32 {
	var out []uint32
	for i := 0; i+toastPointerLen <= len(data); i++ {
		if data[i] != toastPointerByte || data[i+1] != vartagOnDisk {
			continue
		}
		p := data[i : i+toastPointerLen]
		if binary.LittleEndian.Uint32(p[toastRelationIDAt:]) != toastRelation {
			continue
		}
		raw := int64(int32(binary.LittleEndian.Uint32(p[2:])))
		stored := int64(binary.LittleEndian.Uint32(p[6:]) & (1<<extSizeBits - 1))
		if stored < 1 || stored > raw-varHeaderLen {
			continue
		}
		out = append(out, binary.LittleEndian.Uint32(p[toastValueIDAt:]))
		i += toastPointerLen - 1
	}
	return out
}
