package extract

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// binarySignature starts every binary COPY stream.
var binarySignature = []byte("PGCOPY\n\377\r\n\x00")

// binaryRows reads the binary COPY format: the 11-byte signature, int32
// flags, int32 header-extension length and extension, then tuples of an int16
// field count and per field an int32 length (-1 for NULL) and its bytes,
// ended by a count of -1. Values carry no type, so they are read as
// decodeBinary infers from their destination.
func (d *CopyDecoder) binaryRows(tags []Tag) ([]Tag, error) {
	if !d.started {
		b := d.buf
		if len(b) < len(binarySignature) {
			if !bytes.HasPrefix(binarySignature, b) {
				return nil, fmt.Errorf("extract: binary COPY signature not recognized")
			}
			return tags, nil
		}
		if !bytes.Equal(b[:len(binarySignature)], binarySignature) {
			return nil, fmt.Errorf("extract: binary COPY signature not recognized")
		}
		if len(b) < 19 {
			return tags, nil
		}
		flags := binary.BigEndian.Uint32(b[11:])
		if flags&(1<<16) != 0 {
			return nil, fmt.Errorf("extract: binary COPY with OIDs is not supported")
		}
		ext := int64(binary.BigEndian.Uint32(b[15:]))
		if ext > 1<<30 {
			return nil, fmt.Errorf("extract: binary COPY header extension of %d bytes", ext)
		}
		if int64(len(b)) < 19+ext {
			return tags, nil
		}
		d.started = true
		d.consume(int(19 + ext))
	}
	s := d.spec
	for !d.done {
		b := d.buf
		if len(b) < 2 {
			return tags, nil
		}
		n := int16(binary.BigEndian.Uint16(b))
		if n == -1 {
			d.done = true
			d.consume(2)
			return tags, nil
		}
		if int(n) != s.nfields {
			return nil, fmt.Errorf("extract: binary COPY row %d has %d fields, want %d", d.row+1, n, s.nfields)
		}
		// Walk the field lengths first: decode only a complete tuple.
		off := 2
		complete := true
		for f := 0; f < int(n); f++ {
			if len(b) < off+4 {
				complete = false
				break
			}
			l := int32(binary.BigEndian.Uint32(b[off:]))
			off += 4
			if l == -1 {
				continue
			}
			if l < 0 {
				return nil, fmt.Errorf("extract: binary COPY row %d: field length %d", d.row+1, l)
			}
			if len(b)-off < int(l) {
				complete = false
				break
			}
			off += int(l)
		}
		if !complete {
			return tags, nil
		}
		d.row++
		d.resetRow()
		id := ""
		off = 2
		for f := 0; f < int(n); f++ {
			l := int32(binary.BigEndian.Uint32(b[off:]))
			off += 4
			if l == -1 {
				continue
			}
			field := b[off : off+int(l)]
			off += int(l)
			dst := s.dest[f]
			if dst == -2 {
				continue
			}
			r := roleID
			if dst >= 0 {
				r = d.analysis.rule.columnRole(dst)
			}
			v, err := decodeBinary(field, 0, r)
			if err != nil {
				return nil, fmt.Errorf("extract: binary COPY row %d field %d: %w", d.row, f+1, err)
			}
			if dst == -1 {
				id = v
			} else {
				d.vals[dst], d.present[dst] = v, true
			}
		}
		tg, err := d.tag(id)
		if err != nil {
			return nil, err
		}
		tags = append(tags, tg)
		d.consume(off)
	}
	return tags, nil
}
