package pgstore

import (
	"encoding/binary"
	"fmt"
)

// A TOAST table's index is a btree on (chunk_id oid, chunk_seq int4) whose
// leaf entries point at the chunks (nbtree.h, itup.h, PostgreSQL 15):
//   - the page's special space (pd_special, uint16 at byte 16) is
//     BTPageOpaqueData: btpo_prev, btpo_next (uint32 at +4, 0 on the
//     rightmost page of a level), btpo_level, btpo_flags (uint16 at +12:
//     1 = leaf, 4 = deleted, 8 = meta, 16 = half dead), btpo_cycleid;
//   - on a page that is not the rightmost, line pointer 1 is the high key,
//     not an entry;
//   - an entry is IndexTupleData: t_tid (BlockIdData bi_hi, bi_lo, then
//     ip_posid, uint16 each) and t_info (uint16: size in the low 13 bits,
//     0x2000 INDEX_ALT_TID_MASK), then the key (chunk_id at byte 8);
//   - a posting list (deduplicated entries) has INDEX_ALT_TID_MASK and
//     BT_IS_POSTING (0x2000) in ip_posid, whose low 12 bits count its
//     TIDs; t_tid's block number is the offset in the entry of that array
//     of 6-byte TIDs.
const (
	pdSpecialAt      = 16
	btOpaqueLen      = 16
	btNextAt         = 4
	btFlagsAt        = 12
	btpLeaf          = 1
	btpDeleted       = 4
	btpHalfDead      = 16
	indexTupleLen    = 8
	indexAltTID      = 0x2000
	btIsPosting      = 0x2000
	btOffsetMask     = 0x0fff
	itemPointerLen   = 6
	toastIndexKeyLen = 8 // chunk_id, chunk_seq
)

// toastIndexBlocks returns the TOAST table blocks that the leaf entries of
// the TOAST index page page point at for the chunk ids in want (a block
// once per entry: callers dedupe). Pages that are not live leaves (the
// metapage, inner pages, deleted pages) hold none.
func toastIndexBlocks(page []byte, want map[uint32]bool) ([]int64, error) {
	if len(page) < pageHeaderLen {
		return nil, fmt.Errorf("%w: %d bytes, shorter than a page header", errPageUnreadable, len(page))
	}
	lower, special := int(binary.LittleEndian.Uint16(page[pdLowerAt:])), int(binary.LittleEndian.Uint16(page[pdSpecialAt:]))
	if lower < pageHeaderLen || lower > special || special+btOpaqueLen > len(page) || (lower-pageHeaderLen)%linePointerLen != 0 {
		return nil, fmt.Errorf("%w: pd_lower %d and pd_special %d do not fit a btree page of %d bytes", errPageUnreadable, lower, special, len(page))
	}
	flags := binary.LittleEndian.Uint16(page[special+btFlagsAt:])
	if flags&btpLeaf == 0 || flags&(btpDeleted|btpHalfDead) != 0 {
		return nil, nil
	}
	first := 1
	if binary.LittleEndian.Uint32(page[special+btNextAt:]) != 0 {
		first = 2 // line pointer 1 is the high key
	}
	var out []int64
	for line := first; line <= (lower-pageHeaderLen)/linePointerLen; line++ {
		lp := binary.LittleEndian.Uint32(page[pageHeaderLen+linePointerLen*(line-1):])
		off, size := int(lp&0x7fff), int(lp>>17)
		// A killed entry (LP_DEAD) keeps its bytes; an unused one has none.
		if size < indexTupleLen+toastIndexKeyLen || off+size > special {
			continue
		}
		entry := page[off : off+size]
		if !want[binary.LittleEndian.Uint32(entry[indexTupleLen:])] {
			continue
		}
		info, posid := binary.LittleEndian.Uint16(entry[6:]), binary.LittleEndian.Uint16(entry[4:])
		if info&indexAltTID == 0 {
			out = append(out, itemPointerBlock(entry))
			continue
		}
		if posid&btIsPosting == 0 {
			continue // a pivot: no chunk of its own
		}
		at, n := int(itemPointerBlock(entry)), int(posid&btOffsetMask)
		for k := 0; k < n && at+itemPointerLen*(k+1) <= len(entry); k++ {
			out = append(out, itemPointerBlock(entry[at+itemPointerLen*k:]))
		}
	}
	return out, nil
}

// itemPointerBlock is the block number of the ItemPointerData at b.
func itemPointerBlock(b []byte) int64 {
	return int64(binary.LittleEndian.Uint16(b))<<16 | int64(binary.LittleEndian.Uint16(b[2:]))
}
