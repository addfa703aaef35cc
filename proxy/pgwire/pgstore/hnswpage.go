package pgstore

import (
	"encoding/binary"
	"fmt"
)

// pgvector's HNSW pages (hnsw.h, pgvector 0.5 to 0.8), on a little-endian
// server:
//   - block 0 is the metapage; its contents start after the 24-byte page
//     header: uint32 magic 0xA953A953, uint32 version, uint32 dimensions,
//     uint16 m, uint16 ef_construction, uint32 entry block, uint16 entry
//     offset, int16 entry level, uint32 insert page;
//   - every other page holds element and neighbor tuples at its line
//     pointers, and ends in an 8-byte special space whose last uint16 is
//     0xFF90;
//   - an element tuple: uint8 type (1), uint8 level, uint8 deleted, uint8
//     version, 10 heap TIDs (6 bytes each, the first invalid one ends
//     them), the TID of its neighbor tuple, uint16 unused, then the
//     indexed value as stored (a varlena vector or halfvec) at byte 72;
//   - a neighbor tuple: uint8 type (2), uint8 version, uint16 count, then
//     count index TIDs: m for each layer from the element's level down to
//     1, then 2*m for layer 0; a slot with offset 0 is empty.
const (
	hnswMagic          = 0xA953A953
	hnswPageID         = 0xFF90
	hnswElementType    = 1
	hnswNeighborType   = 2
	hnswHeapTIDs       = 10
	hnswElementHeader  = 72
	hnswNeighborHeader = 4
	hnswMetaLen        = 28
)

// itemPointer is a tuple's address: its block and its 1-based line.
type itemPointer struct {
	block uint32
	line  uint16
}

// readItemPointer reads ItemPointerData (bi_hi, bi_lo, ip_posid).
func readItemPointer(b []byte) itemPointer {
	return itemPointer{
		block: uint32(binary.LittleEndian.Uint16(b))<<16 | uint32(binary.LittleEndian.Uint16(b[2:])),
		line:  binary.LittleEndian.Uint16(b[4:]),
	}
}

// hnswMeta is what a walk needs of the metapage.
type hnswMeta struct {
	m          int
	entry      itemPointer // line 0 when the index is empty
	entryLevel int
}

func parseHNSWMeta(page []byte) (hnswMeta, error) {
	if len(page) < pageHeaderLen+hnswMetaLen {
		return hnswMeta{}, fmt.Errorf("%w: %d bytes, too short for an HNSW metapage", errPageUnreadable, len(page))
	}
	b := page[pageHeaderLen:]
	if binary.LittleEndian.Uint32(b) != hnswMagic {
		return hnswMeta{}, fmt.Errorf("%w: no HNSW magic number on block 0", errPageUnreadable)
	}
	meta := hnswMeta{
		m:          int(binary.LittleEndian.Uint16(b[12:])),
		entry:      itemPointer{block: binary.LittleEndian.Uint32(b[16:]), line: binary.LittleEndian.Uint16(b[20:])},
		entryLevel: int(int16(binary.LittleEndian.Uint16(b[22:]))),
	}
	if meta.m < 1 || meta.entryLevel < 0 {
		return hnswMeta{}, fmt.Errorf("%w: HNSW metapage with m %d and entry level %d", errPageUnreadable, meta.m, meta.entryLevel)
	}
	return meta, nil
}

// pageTuple returns the tuple at line (1-based) of an index page, or nil
// when the line holds none or the page is not laid out as one.
func pageTuple(page []byte, line uint16) []byte {
	if line == 0 || int(line) > linePointers(page) {
		return nil
	}
	lp := binary.LittleEndian.Uint32(page[pageHeaderLen+linePointerLen*(int(line)-1):])
	off, flags, size := int(lp&0x7fff), (lp>>15)&3, int(lp>>17)
	if flags != lpNormal || size == 0 || off < pageHeaderLen || off+size > len(page) {
		return nil
	}
	return page[off : off+size]
}

// hasPageID reports whether page ends in the 8-byte special space of
// pgvector's indexes (uint32 next page, uint16 unused, uint16 page id)
// with the page id id.
func hasPageID(page []byte, id uint16) bool {
	if len(page) < pageHeaderLen {
		return false
	}
	special := int(binary.LittleEndian.Uint16(page[pdSpecialAt:]))
	return special >= pageHeaderLen && special+specialSpaceSize <= len(page) && binary.LittleEndian.Uint16(page[special+6:]) == id
}

// hnswElement is an element tuple, read in place (value points into its
// page).
type hnswElement struct {
	level     int
	heapTIDs  [hnswHeapTIDs]itemPointer
	neighbors itemPointer
	value     []byte // the stored vector's elements, after its header
}

// parseHNSWElement reads the element tuple tuple; ok is false for any
// other tuple or one too short for its value.
func parseHNSWElement(tuple []byte, elemSize int) (e hnswElement, ok bool) {
	if len(tuple) < hnswElementHeader+8 || tuple[0] != hnswElementType {
		return e, false
	}
	e.level = int(tuple[1])
	for i := range e.heapTIDs {
		e.heapTIDs[i] = readItemPointer(tuple[4+itemPointerLen*i:])
	}
	e.neighbors = readItemPointer(tuple[4+itemPointerLen*hnswHeapTIDs:])
	e.value, ok = storedVector(tuple[hnswElementHeader:], elemSize)
	return e, ok
}

// holds reports whether the element points at the heap tuple tid.
func (e *hnswElement) holds(tid itemPointer) bool {
	for _, h := range e.heapTIDs {
		if h.line == 0 {
			return false
		}
		if h == tid {
			return true
		}
	}
	return false
}

// hnswNeighbors returns the index TIDs of the neighbor tuple tuple on
// layer of an element of level level in an index of m: nil when the tuple
// is not that element's (a vacuum replaced it) or not a neighbor tuple.
func hnswNeighbors(tuple []byte, level, layer, m int) []itemPointer {
	if len(tuple) < hnswNeighborHeader || tuple[0] != hnswNeighborType || layer > level {
		return nil
	}
	count := int(binary.LittleEndian.Uint16(tuple[2:]))
	if count != (level+2)*m || hnswNeighborHeader+itemPointerLen*count > len(tuple) {
		return nil
	}
	start, n := (level-layer)*m, m
	if layer == 0 {
		n = 2 * m
	}
	out := make([]itemPointer, 0, n)
	for i := start; i < start+n; i++ {
		if tid := readItemPointer(tuple[hnswNeighborHeader+itemPointerLen*i:]); tid.line != 0 {
			out = append(out, tid)
		}
	}
	return out
}
