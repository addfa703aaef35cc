package extract

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func copyAnalysis(t testing.TB, r *Rules, sql string) *Analysis {
	t.Helper()
	as, err := r.Analyze(sql, nil)
	require.NoError(t, err)
	require.Len(t, as, 1)
	require.Equal(t, KindCopy, as[0].Kind, as[0].Reason)
	return as[0]
}

// decodeChunks feeds data split into chunks of size n (0 = one chunk).
func decodeChunks(t testing.TB, a *Analysis, data []byte, n int) ([]Tag, error) {
	d, err := a.NewCopyDecoder()
	require.NoError(t, err)
	var tags []Tag
	if n <= 0 {
		n = len(data) + 1
	}
	for len(data) > 0 {
		k := min(n, len(data))
		got, err := d.Write(data[:k])
		if err != nil {
			return nil, err
		}
		tags = append(tags, got...)
		data = data[k:]
	}
	got, err := d.End()
	return append(tags, got...), err
}

// binaryCopy builds a binary COPY stream; a nil field is NULL.
func binaryCopy(rows ...[][]byte) []byte {
	b := append([]byte(nil), binarySignature...)
	b = append(b, be32(0)...)
	b = append(b, be32(4)...)
	b = append(b, "ext!"...) // a header extension, which readers must skip
	for _, row := range rows {
		b = append(b, be16(int16(len(row)))...)
		for _, f := range row {
			if f == nil {
				b = append(b, be32(-1)...)
				continue
			}
			b = append(b, be32(int32(len(f)))...)
			b = append(b, f...)
		}
	}
	return append(b, be16(-1)...)
}

func TestCopy_DecodesRowsAcrossAnyChunking(t *testing.T) {
	r := testRules(t)
	const docs = "public.docs"
	vector := []byte{0, 2, 0, 0, 0x3f, 0x80, 0, 0, 0x40, 0, 0, 0} // pgvector binary [1,2]
	cases := []struct {
		name string
		sql  string
		data string
		want []Tag
	}{
		{"text", `COPY docs (id, user_id, body) FROM STDIN`,
			"a\talice\thello\nb\tbob\tx\\ty\n",
			[]Tag{write(docs, "a", "alice"), write(docs, "b", "bob")}},
		{"text escapes and NULL", `COPY docs (id, user_id, cmetadata) FROM STDIN`,
			"a\\tb\tal\\\\ice\t{\"user_id\":\"j\\\\u00e9\"}\nc\t\\N\t\\N\nd\t\\x41\\101\\n\t\\N\n",
			[]Tag{write(docs, "a\tb", `al\ice`, "jé"), {Table: docs, Op: OpWrite, ID: "c"}, write(docs, "d", "AA\n")}},
		{"text with escaped newline inside a field", `COPY docs (id, user_id) FROM STDIN`,
			"a\tx\\\ny\n", []Tag{write(docs, "a", "x\ny")}},
		{"text CRLF and end marker", `COPY docs (id, user_id) FROM STDIN`,
			"a\tu\r\n\\.\r\nignored\tafter\n", []Tag{write(docs, "a", "u")}},
		{"text last row without newline", `COPY docs (id, user_id) FROM STDIN`,
			"a\tu\nb\tv", []Tag{write(docs, "a", "u"), write(docs, "b", "v")}},
		{"text custom delimiter and null", `COPY docs (id, user_id) FROM STDIN WITH (DELIMITER '|', NULL 'nil')`,
			"a|nil\nb|u\n", []Tag{{Table: docs, Op: OpWrite, ID: "a"}, write(docs, "b", "u")}},
		{"text header", `COPY docs (id, user_id) FROM STDIN WITH (HEADER)`,
			"id\tuser_id\na\tu\n", []Tag{write(docs, "a", "u")}},
		{"csv quoting", `COPY docs (id, user_id, cmetadata) FROM STDIN WITH (FORMAT csv)`,
			"a,alice,\"{\"\"user_id\"\": \"\"j\"\"}\"\n\"b,1\",\"multi\nline\",\n",
			[]Tag{write(docs, "a", "alice", "j"), write(docs, "b,1", "multi\nline")}},
		{"csv header and NULL vs empty quoted", `COPY docs (id, user_id) FROM STDIN (FORMAT csv, HEADER true)`,
			"id,user_id\na,\nb,\"\"\r\n", []Tag{{Table: docs, Op: OpWrite, ID: "a"}, write(docs, "b", "")}},
		{"csv custom delimiter quote escape null", `COPY docs (id, user_id) FROM STDIN WITH (FORMAT csv, DELIMITER ';', QUOTE '''', ESCAPE '\', NULL 'NULL')`,
			"a;'it\\'s;x'\nb;NULL\nc;'NULL'\n",
			[]Tag{write(docs, "a", "it's;x"), {Table: docs, Op: OpWrite, ID: "b"}, write(docs, "c", "NULL")}},
		{"csv old syntax", `COPY docs (id, user_id) FROM STDIN CSV HEADER`,
			"id,user_id\na,u\n", []Tag{write(docs, "a", "u")}},
		{"binary (pgx CopyFrom)", `copy "docs" ( "id", "user_id", "embedding" ) from stdin binary;`,
			string(binaryCopy([][]byte{uuidBytes, []byte("alice"), vector}, [][]byte{be64(42), nil, vector})),
			[]Tag{write(docs, uuidText, "alice"), {Table: docs, Op: OpWrite, ID: "42"}}},
		{"binary jsonb (pgvector-python)", `COPY docs (user_id, cmetadata, embedding) FROM STDIN WITH (FORMAT BINARY)`,
			string(binaryCopy([][]byte{[]byte("u1"), append([]byte{1}, `{"user_id":"u2"}`...), vector})),
			[]Tag{write(docs, "", "u1", "u2")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := copyAnalysis(t, r, c.sql)
			for _, n := range []int{0, 1, 2, 3, 5, 7, 13} {
				got, err := decodeChunks(t, a, []byte(c.data), n)
				require.NoError(t, err, "chunk size %d", n)
				assert.Equal(t, c.want, got, "chunk size %d", n)
			}
		})
	}
}

func TestCopy_RejectsMalformedStreams(t *testing.T) {
	r := testRules(t)
	good := binaryCopy([][]byte{[]byte("a"), []byte("u")})
	cases := []struct {
		name string
		sql  string
		data []byte
	}{
		{"text too few fields", `COPY docs (id, user_id) FROM STDIN`, []byte("a\n")},
		{"text too many fields", `COPY docs (id, user_id) FROM STDIN`, []byte("a\tb\tc\n")},
		{"csv unterminated quote", `COPY docs (id, user_id) FROM STDIN CSV`, []byte("a,\"u\n")},
		{"bad JSON in subject", `COPY docs (id, cmetadata) FROM STDIN`, []byte("a\t{\n")},
		{"binary bad signature", `COPY docs (id, user_id) FROM STDIN BINARY`, []byte("PGCOPY\nXXXXXXXXXXXXXXX")},
		{"binary truncated tuple", `COPY docs (id, user_id) FROM STDIN BINARY`, good[:len(good)-4]},
		{"binary truncated header", `COPY docs (id, user_id) FROM STDIN BINARY`, good[:14]},
		{"binary empty", `COPY docs (id, user_id) FROM STDIN BINARY`, nil},
		{"binary wrong field count", `COPY docs (id, user_id) FROM STDIN BINARY`, binaryCopy([][]byte{[]byte("a")})},
		{"binary negative length", `COPY docs (id, user_id) FROM STDIN BINARY`, append(binaryCopy()[:23], append(be16(2), be32(-7)...)...)},
		{"binary with OIDs", `COPY docs (id, user_id) FROM STDIN BINARY`, append(append([]byte(nil), binarySignature...), append(be32(1<<16), be32(0)...)...)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := copyAnalysis(t, r, c.sql)
			_, err := decodeChunks(t, a, c.data, 3)
			assert.Error(t, err)
		})
	}
}

func TestCopy_ErrorIsSticky(t *testing.T) {
	a := copyAnalysis(t, testRules(t), `COPY docs (id, user_id) FROM STDIN`)
	d, err := a.NewCopyDecoder()
	require.NoError(t, err)
	_, err = d.Write([]byte("a\n"))
	require.Error(t, err)
	_, err2 := d.Write([]byte("a\tb\n"))
	assert.Equal(t, err, err2)
	_, err3 := d.End()
	assert.Equal(t, err, err3)
}

func TestCopy_MemoryStaysBoundedByOneRow(t *testing.T) {
	a := copyAnalysis(t, testRules(t), `COPY docs (id, user_id, body) FROM STDIN`)
	d, err := a.NewCopyDecoder()
	require.NoError(t, err)
	big := bytes.Repeat([]byte("x"), 1<<20)
	row := append(append([]byte("a\tu\t"), big...), '\n')
	for i := 0; i < 20; i++ {
		for off := 0; off < len(row); off += 8192 {
			_, err := d.Write(row[off:min(off+8192, len(row))])
			require.NoError(t, err)
		}
	}
	// A small row after the big ones releases the big buffer.
	_, err = d.Write([]byte("b\tv\tsmall\n"))
	require.NoError(t, err)
	assert.Less(t, cap(d.buf), 2<<20)
	_, err = d.Write([]byte("c\tw\t"))
	require.NoError(t, err)
	assert.LessOrEqual(t, cap(d.buf), keepBuf)
}

func TestCopy_DecoderOnlyForCopy(t *testing.T) {
	as, err := testRules(t).Analyze(`DELETE FROM docs WHERE id = 'a'`, nil)
	require.NoError(t, err)
	_, err = as[0].NewCopyDecoder()
	assert.Error(t, err)
	tags, err := copyAnalysis(t, testRules(t), `COPY docs (id) FROM STDIN`).Tags(Params{})
	assert.NoError(t, err)
	assert.Empty(t, tags)
}
