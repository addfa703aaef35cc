package extract

import (
	"errors"
	"fmt"
)

// CopyDecoder reads the rows of a COPY … FROM STDIN as the CopyData messages
// carrying them arrive, and tags each complete row. Row boundaries need not
// align with messages; it keeps at most one incomplete row in memory.
// It is not safe for concurrent use.
type CopyDecoder struct {
	analysis *Analysis
	spec     *copySpec

	buf  []byte // unconsumed bytes: at most the row in progress
	scan int    // text/CSV: bytes of buf already searched for the row's end
	// inQuote is the CSV scanner's state at buf[scan].
	inQuote bool
	started bool // header line skipped / binary header read
	done    bool // end-of-data marker or binary trailer seen
	err     error
	row     int // rows read, for error messages

	vals    []string
	present []bool
}

// ErrCopyTruncated means the COPY data ended in the middle of a row or
// header.
var ErrCopyTruncated = errors.New("extract: COPY data ends in the middle of a row")

// NewCopyDecoder starts decoding the data of a KindCopy statement.
func (a *Analysis) NewCopyDecoder() (*CopyDecoder, error) {
	if a.Kind != KindCopy {
		return nil, fmt.Errorf("extract: NewCopyDecoder on a %s analysis, want copy", a.Kind)
	}
	return &CopyDecoder{
		analysis: a, spec: a.copy,
		vals:    make([]string, len(a.rule.columns)),
		present: make([]bool, len(a.rule.columns)),
	}, nil
}

// Write feeds one CopyData payload and returns the tags of the rows it
// completed. After an error every call returns that error.
func (d *CopyDecoder) Write(data []byte) ([]Tag, error) {
	if d.err != nil {
		return nil, d.err
	}
	if d.done {
		return nil, nil // PostgreSQL ignores what follows the end marker
	}
	d.buf = append(d.buf, data...)
	var tags []Tag
	var err error
	if d.spec.format == copyBinary {
		tags, err = d.binaryRows(nil)
	} else {
		tags, err = d.lineRows(nil, false)
	}
	if err != nil {
		d.err = err
		return nil, err
	}
	return tags, nil
}

// End is called at CopyDone: it reads a last text row that has no final
// newline and reports a stream cut in the middle of a row.
func (d *CopyDecoder) End() ([]Tag, error) {
	if d.err != nil {
		return nil, d.err
	}
	if d.done {
		return nil, nil
	}
	var tags []Tag
	var err error
	if d.spec.format == copyBinary {
		if !d.started || len(d.buf) > 0 {
			err = ErrCopyTruncated
		}
	} else {
		tags, err = d.lineRows(nil, true)
	}
	d.done = true
	if err != nil {
		d.err = err
		return nil, err
	}
	return tags, nil
}

// keepBuf is the largest buffer kept from one CopyData message to the
// next. Clients send COPY data in chunks of tens of kilobytes: releasing
// such a buffer after each would cost an allocation per message, and the
// garbage collector's work.
const keepBuf = 1 << 20

// consume drops the first n bytes of buf, keeping its memory bounded: after
// a huge row the big array is released instead of kept for the next ones.
func (d *CopyDecoder) consume(n int) {
	rest := len(d.buf) - n
	if cap(d.buf) > keepBuf && rest < cap(d.buf)/4 {
		nb := make([]byte, rest, max(rest, 4<<10))
		copy(nb, d.buf[n:])
		d.buf = nb
	} else {
		copy(d.buf, d.buf[n:])
		d.buf = d.buf[:rest]
	}
	d.scan = 0
}

// tag builds the tag of one decoded row from d.vals/d.present.
func (d *CopyDecoder) tag(id string) (Tag, error) {
	t := d.analysis.rule
	subjects, err := t.rowSubjects(nil, d.vals, d.present)
	if err != nil {
		return Tag{}, fmt.Errorf("COPY row %d: %w", d.row, err)
	}
	return Tag{Table: t.name, Op: OpWrite, ID: id, Subjects: subjects}, nil
}

func (d *CopyDecoder) resetRow() {
	for i := range d.present {
		d.present[i] = false
		d.vals[i] = ""
	}
}
