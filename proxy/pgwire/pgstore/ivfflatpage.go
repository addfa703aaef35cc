package pgstore

import (
	"encoding/binary"
	"fmt"
)

// pgvector's IVFFlat pages (ivfflat.h, pgvector 0.5 to 0.8), on a
// little-endian server:
//   - block 0 is the metapage; its contents start after the 24-byte page
//     header: uint32 magic 0x14FF1A7, uint32 version, uint16 dimensions,
//     uint16 lists;
//   - from block 1, list pages hold one tuple per list: uint32 start page,
//     uint32 insert page, then the list's center as stored (a varlena
//     vector or halfvec);
//   - a list's entries are on a chain of pages from its start page; each
//     entry is an IndexTuple (the heap TID, uint16 t_info, the value);
//   - every page but the metapage ends in an 8-byte special space: uint32
//     the next page of its chain (0xFFFFFFFF ends it), uint16 unused,
//     uint16 0xFF84.
const (
	ivfflatMagic     = 0x14FF1A7
	ivfflatPageID    = 0xFF84
	ivfflatMetaLen   = 12
	ivfflatListLen   = 8
	invalidBlock     = 0xFFFFFFFF
	specialSpaceSize = 8
)

// ivfflatMeta is what locating needs of the metapage.
type ivfflatMeta struct {
	lists int
}

func parseIVFFlatMeta(page []byte) (ivfflatMeta, error) {
	if len(page) < pageHeaderLen+ivfflatMetaLen {
		return ivfflatMeta{}, fmt.Errorf("%w: %d bytes, too short for an IVFFlat metapage", errPageUnreadable, len(page))
	}
	b := page[pageHeaderLen:]
	if binary.LittleEndian.Uint32(b) != ivfflatMagic {
		return ivfflatMeta{}, fmt.Errorf("%w: no IVFFlat magic number on block 0", errPageUnreadable)
	}
	return ivfflatMeta{lists: int(binary.LittleEndian.Uint16(b[10:]))}, nil
}

// ivfflatNext is the next page of page's chain; false at its end or on a
// page that is not an IVFFlat page.
func ivfflatNext(page []byte) (uint32, bool) {
	if !hasPageID(page, ivfflatPageID) {
		return 0, false
	}
	next := binary.LittleEndian.Uint32(page[binary.LittleEndian.Uint16(page[pdSpecialAt:]):])
	return next, next != invalidBlock
}

// ivfflatList is one list: where its entries start, and its center's
// elements as stored.
type ivfflatList struct {
	start  uint32
	center []byte
}

// ivfflatLists returns the list tuples of a list page.
func ivfflatLists(page []byte, elemSize int) []ivfflatList {
	if !hasPageID(page, ivfflatPageID) {
		return nil
	}
	var out []ivfflatList
	for line := 1; line <= linePointers(page); line++ {
		tuple := pageTuple(page, uint16(line))
		if len(tuple) < ivfflatListLen+8 {
			continue
		}
		value, ok := storedVector(tuple[ivfflatListLen:], elemSize)
		if !ok {
			continue
		}
		out = append(out, ivfflatList{start: binary.LittleEndian.Uint32(tuple), center: value})
	}
	return out
}

// ivfflatHolds reports whether an entry of the entry page page points at
// heap.
func ivfflatHolds(page []byte, heap itemPointer) bool {
	if !hasPageID(page, ivfflatPageID) {
		return false
	}
	for line := 1; line <= linePointers(page); line++ {
		if tuple := pageTuple(page, uint16(line)); len(tuple) >= indexTupleLen && readItemPointer(tuple) == heap {
			return true
		}
	}
	return false
}

// linePointers is how many line pointers page has (0 for a page whose
// pd_lower is not in it).
func linePointers(page []byte) int {
	if len(page) < pageHeaderLen {
		return 0
	}
	lower := int(binary.LittleEndian.Uint16(page[pdLowerAt:]))
	if lower < pageHeaderLen || lower > len(page) {
		return 0
	}
	return min((lower-pageHeaderLen)/linePointerLen, 0xffff)
}

// storedVector returns the elements of the varlena vector or halfvec at
// the start of b (a 4-byte header, int16 dim, int16 unused, then dim
// elements of elemSize bytes).
func storedVector(b []byte, elemSize int) ([]byte, bool) {
	if len(b) < 8 {
		return nil, false
	}
	size, dim := int(binary.LittleEndian.Uint32(b)>>2), int(binary.LittleEndian.Uint16(b[4:]))
	if size > len(b) || 8+dim*elemSize > size {
		return nil, false
	}
	return b[8 : 8+dim*elemSize], true
}
