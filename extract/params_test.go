package extract

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var uuidBytes = []byte{0x0f, 0x8f, 0xad, 0x5b, 0xd9, 0xcb, 0x46, 0x9f, 0xa1, 0x65, 0x70, 0x86, 0x77, 0x28, 0x95, 0x0e}

const uuidText = "0f8fad5b-d9cb-469f-a165-70867728950e"

func be32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func be64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
func be16(v int16) []byte { return binary.BigEndian.AppendUint16(nil, uint16(v)) }

// binArray encodes a one-dimensional binary array (array_send).
func binArray(elem uint32, elems ...[]byte) []byte {
	b := be32(1)
	b = append(b, be32(0)...)
	b = binary.BigEndian.AppendUint32(b, elem)
	b = append(b, be32(int32(len(elems)))...)
	b = append(b, be32(1)...)
	for _, e := range elems {
		if e == nil {
			b = append(b, be32(-1)...)
			continue
		}
		b = append(b, be32(int32(len(e)))...)
		b = append(b, e...)
	}
	return b
}

func TestTags_DecodesBinaryParams(t *testing.T) {
	r := testRules(t)
	const ins = `INSERT INTO docs (id, user_id, cmetadata) VALUES ($1, $2, $3)`
	jsonb := append([]byte{1}, `{"user_id":"j"}`...)
	cases := []struct {
		name string
		sql  string
		p    Params
		want []Tag
	}{
		{"uuid id, text subject, jsonb metadata by OID", ins,
			Params{Values: [][]byte{uuidBytes, []byte("alice"), jsonb}, Formats: []int16{1}, Types: []uint32{2950, 25, 3802}},
			[]Tag{write("public.docs", uuidText, "alice", "j")}},
		{"json OID is plain text", ins,
			Params{Values: [][]byte{[]byte("a"), []byte("b"), []byte(`{"user_id":"j"}`)}, Formats: []int16{1, 1, 1}, Types: []uint32{1043, 1042, 114}},
			[]Tag{write("public.docs", "a", "b", "j")}},
		{"int ids by OID", ins,
			Params{Values: [][]byte{be64(-5), be32(7), nil}, Formats: []int16{1, 1, 0}, Types: []uint32{20, 23}},
			[]Tag{write("public.docs", "-5", "7")}},
		{"int2 and name", ins,
			Params{Values: [][]byte{be16(3), []byte("nm"), nil}, Formats: []int16{1}, Types: []uint32{21, 19}},
			[]Tag{write("public.docs", "3", "nm")}},
		{"mixed formats per param", ins,
			Params{Values: [][]byte{[]byte("t"), uuidBytes, []byte(`{"user_id":"x"}`)}, Formats: []int16{0, 1, 0}, Types: []uint32{0, 2950, 0}},
			[]Tag{write("public.docs", "t", uuidText, "x")}},
		{"OID 0: 16 raw bytes in the id are a uuid", ins,
			Params{Values: [][]byte{uuidBytes, []byte("alice"), jsonb}, Formats: []int16{1}},
			[]Tag{write("public.docs", uuidText, "alice", "j")}},
		{"OID 0: 4 and 8 raw bytes are integers", ins,
			Params{Values: [][]byte{be32(9), be64(10), []byte(`{"user_id":"p"}`)}, Formats: []int16{1}},
			[]Tag{write("public.docs", "9", "10", "p")}},
		{"OID 0: printable bytes are text", ins,
			Params{Values: [][]byte{[]byte("abcd"), []byte("0123456789abcdef"), []byte(`{"user_id":"p"}`)}, Formats: []int16{1}},
			[]Tag{write("public.docs", "abcd", "0123456789abcdef", "p")}},
		{"cast names the type when the client does not", `INSERT INTO docs (id, cmetadata) VALUES ($1::uuid, $2::jsonb)`,
			Params{Values: [][]byte{uuidBytes, jsonb}, Formats: []int16{1}},
			[]Tag{write("public.docs", uuidText, "j")}},
		{"binary uuid array for ANY", `DELETE FROM docs WHERE id = ANY($1)`,
			Params{Values: [][]byte{binArray(2950, uuidBytes, nil, uuidBytes)}, Formats: []int16{1}, Types: []uint32{2951}},
			[]Tag{{Table: "public.docs", Op: OpDelete, ID: uuidText}, {Table: "public.docs", Op: OpDelete, ID: uuidText}}},
		{"binary text array for ANY", `DELETE FROM docs WHERE id = ANY($1)`,
			Params{Values: [][]byte{binArray(25, []byte("a"), []byte("b"))}, Formats: []int16{1}},
			[]Tag{{Table: "public.docs", Op: OpDelete, ID: "a"}, {Table: "public.docs", Op: OpDelete, ID: "b"}}},
		{"binary int8 array for ANY", `DELETE FROM docs WHERE id = ANY($1)`,
			Params{Values: [][]byte{binArray(20, be64(1), be64(2))}, Formats: []int16{1}},
			[]Tag{{Table: "public.docs", Op: OpDelete, ID: "1"}, {Table: "public.docs", Op: OpDelete, ID: "2"}}},
		{"NULL param", ins, Params{Values: [][]byte{[]byte("a"), nil, nil}, Formats: []int16{1}, Types: []uint32{25}},
			[]Tag{{Table: "public.docs", Op: OpWrite, ID: "a"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, tagsOf(t, r, c.sql, c.p))
		})
	}
}

func TestTags_RejectsUndecodableParams(t *testing.T) {
	r := testRules(t)
	cases := []struct {
		name string
		sql  string
		p    Params
	}{
		{"short uuid", `INSERT INTO docs (id) VALUES ($1)`, Params{Values: [][]byte{{1, 2}}, Formats: []int16{1}, Types: []uint32{2950}}},
		{"jsonb without version byte", `INSERT INTO docs (id, cmetadata) VALUES ('a', $1)`, Params{Values: [][]byte{[]byte(`{}`)}, Formats: []int16{1}, Types: []uint32{3802}}},
		{"unknown binary type", `INSERT INTO docs (id) VALUES ($1)`, Params{Values: [][]byte{{0, 0, 0, 0}}, Formats: []int16{1}, Types: []uint32{700}}},
		{"bad format code", `INSERT INTO docs (id) VALUES ($1)`, Params{Values: [][]byte{[]byte("a")}, Formats: []int16{2}}},
		{"truncated binary array", `DELETE FROM docs WHERE id = ANY($1)`, Params{Values: [][]byte{binArray(25, []byte("abc"))[:22]}, Formats: []int16{1}}},
		{"array claiming many elements", `DELETE FROM docs WHERE id = ANY($1)`, Params{Values: [][]byte{append(append(append(be32(1), be32(0)...), be32(25)...), append(be32(1<<30), be32(1)...)...)}, Formats: []int16{1}}},
		{"malformed text array", `DELETE FROM docs WHERE id = ANY($1)`, textParams(`{a,"b}`)},
		{"multi-dimensional text array", `DELETE FROM docs WHERE id = ANY($1)`, textParams(`{{a},{b}}`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			as, err := r.Analyze(c.sql, nil)
			require.NoError(t, err)
			require.Len(t, as, 1)
			_, err = as[0].Tags(c.p)
			assert.Error(t, err)
		})
	}
}

func TestTextArray_ParsesPostgreSQLArrayLiterals(t *testing.T) {
	cases := map[string][]string{
		`{}`:                  nil,
		`{a}`:                 {"a"},
		`{a,b}`:               {"a", "b"},
		` { a , b } `:         {"a", "b"},
		`{"a,b","c\"d",NULL}`: {"a,b", `c"d`},
		`{"NULL",null}`:       {"NULL"},
		`[1:2]={x,y}`:         {"x", "y"},
		`{a\,b}`:              {"a,b"},
	}
	for in, want := range cases {
		got, err := textArray(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
}
