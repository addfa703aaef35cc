package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/lethe-privacy/lethe/bench/internal/vectors"
)

// rowGen produces the benchmark rows: a text id, a vector of dim float32s
// and a jsonb {"user_id": "user<N>@example.com"} over nSubjects subjects.
// Vectors come from a small pool (bench/internal/vectors); the proxy and
// the server still see distinct rows because the id and subject change
// with every row.
type rowGen struct {
	dim       int
	nSubjects int
	prefix    string
	vecs      *vectors.Pool
}

func newRowGen(dim, nSubjects, pool int, seed uint64) *rowGen {
	return &rowGen{dim: dim, nSubjects: nSubjects, vecs: vectors.NewPool(dim, pool, seed)}
}

func (g *rowGen) id(i int) string      { return g.prefix + strconv.Itoa(i) }
func (g *rowGen) subject(i int) string { return "user" + strconv.Itoa(i%g.nSubjects) + "@example.com" }
func (g *rowGen) meta(i int) string    { return `{"user_id": "` + g.subject(i) + `"}` }
func (g *rowGen) vecBin(i int) []byte  { return g.vecs.Binary[i%len(g.vecs.Binary)] }
func (g *rowGen) vecText(i int) string { return g.vecs.Text[i%len(g.vecs.Text)] }

// insertSQL returns "INSERT INTO table (id, embedding, metadata) VALUES
// ($1,$2,$3),..." for n rows.
func insertSQL(table string, n int) string {
	var sb strings.Builder
	sb.WriteString("INSERT INTO " + table + " (id, embedding, metadata) VALUES ")
	for r := range n {
		if r > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "($%d,$%d,$%d)", 3*r+1, 3*r+2, 3*r+3)
	}
	return sb.String()
}

// literalSQL appends a simple-protocol INSERT of rows [from, from+n) with
// inline literals to buf and returns it.
func (g *rowGen) literalSQL(buf []byte, table string, from, n int) []byte {
	buf = append(buf, "INSERT INTO "+table+" (id, embedding, metadata) VALUES "...)
	for i := from; i < from+n; i++ {
		if i > from {
			buf = append(buf, ',')
		}
		buf = append(buf, "('"...)
		buf = append(buf, g.id(i)...)
		buf = append(buf, "','"...)
		buf = append(buf, g.vecText(i)...)
		buf = append(buf, "','"...)
		buf = append(buf, g.meta(i)...)
		buf = append(buf, "'::jsonb)"...)
	}
	return buf
}

// copyReader streams a COPY ... FROM STDIN WITH (FORMAT BINARY) body for
// rows [0, n), generating each row as it is read: memory stays at one row
// plus the caller's buffer whatever n is.
type copyReader struct {
	g       *rowGen
	n, next int
	buf     []byte
	off     int
	done    bool
	bytes   int64
}

var copySignature = []byte("PGCOPY\n\xff\r\n\x00")

func newCopyReader(g *rowGen, n int) *copyReader {
	c := &copyReader{g: g, n: n}
	c.buf = append(c.buf[:0], copySignature...)
	c.buf = binary.BigEndian.AppendUint32(c.buf, 0) // flags
	c.buf = binary.BigEndian.AppendUint32(c.buf, 0) // header extension length
	return c
}

func (c *copyReader) fill() {
	c.buf, c.off = c.buf[:0], 0
	if c.next >= c.n {
		c.buf = binary.BigEndian.AppendUint16(c.buf, 0xffff) // trailer: -1
		c.done = true
		return
	}
	i := c.next
	c.next++
	id, vec, meta := c.g.id(i), c.g.vecBin(i), c.g.meta(i)
	c.buf = binary.BigEndian.AppendUint16(c.buf, 3)
	c.buf = binary.BigEndian.AppendUint32(c.buf, uint32(len(id)))
	c.buf = append(c.buf, id...)
	c.buf = binary.BigEndian.AppendUint32(c.buf, uint32(len(vec)))
	c.buf = append(c.buf, vec...)
	c.buf = binary.BigEndian.AppendUint32(c.buf, uint32(1+len(meta)))
	c.buf = append(c.buf, 1) // jsonb binary format version
	c.buf = append(c.buf, meta...)
}

func (c *copyReader) Read(p []byte) (int, error) {
	total := 0
	for total < len(p) {
		if c.off == len(c.buf) {
			if c.done {
				break
			}
			c.fill()
		}
		n := copy(p[total:], c.buf[c.off:])
		c.off += n
		total += n
	}
	c.bytes += int64(total)
	if total == 0 {
		return 0, io.EOF
	}
	return total, nil
}

// copyRowBytes is the size of one row in the binary COPY stream.
func (g *rowGen) copyRowBytes() int {
	return 2 + 4 + len(g.id(100000)) + 4 + 4 + 4*g.dim + 4 + 1 + len(g.meta(100))
}
