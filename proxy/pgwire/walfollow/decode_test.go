package walfollow

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// pgoutput messages, built by hand from the protocol's layout.
func relationMsg(id uint32, schema, name string, cols ...string) []byte {
	b := []byte{'R'}
	b = binary.BigEndian.AppendUint32(b, id)
	b = append(append(b, schema...), 0)
	b = append(append(b, name...), 0)
	b = append(b, 'd')
	b = binary.BigEndian.AppendUint16(b, uint16(len(cols)))
	for _, c := range cols {
		b = append(b, 0)
		b = append(append(b, c...), 0)
		b = binary.BigEndian.AppendUint32(b, 25) // text
		b = binary.BigEndian.AppendUint32(b, 0xffffffff)
	}
	return b
}

// tuple encodes values; nil is NULL, "\x00u" an unchanged TOASTed value.
func tuple(vals ...*string) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(len(vals)))
	for _, v := range vals {
		switch {
		case v == nil:
			b = append(b, 'n')
		case *v == "\x00u":
			b = append(b, 'u')
		default:
			b = append(b, 't')
			b = binary.BigEndian.AppendUint32(b, uint32(len(*v)))
			b = append(b, *v...)
		}
	}
	return b
}

func str(s string) *string { return &s }

func insertMsg(id uint32, t []byte) []byte {
	b := binary.BigEndian.AppendUint32([]byte{'I'}, id)
	return append(append(b, 'N'), t...)
}

func testDecoder(t testing.TB) *decoder {
	rules, err := extract.NewRules([]extract.Rule{{Table: "public.docs", ID: "id", Subjects: subjects("metadata->>'user_id'", "owner")}})
	require.NoError(t, err)
	resolve := func(_ uint32, schema, name string) (string, bool, error) {
		_, ok := rules.Stored(schema + "." + name)
		return schema + "." + name, ok, nil
	}
	return newDecoder(rules, &testCore{}, resolve, &Stats{})
}

func decodeAll(t testing.TB, d *decoder, msgs ...[]byte) ([]ledger.Change, error) {
	var out []ledger.Change
	var m message
	for _, data := range msgs {
		if err := m.decode(data); err != nil {
			return out, err
		}
		var err error
		if out, err = d.change(&m, out); err != nil {
			return out, err
		}
	}
	return out, nil
}

func TestDecoder_ReadsColumnsByNameAndSkipsWhatItCannotName(t *testing.T) {
	d := testDecoder(t)
	changes, err := decodeAll(t, d,
		relationMsg(1, "public", "docs", "owner", "id", "metadata"),
		insertMsg(1, tuple(str("carol"), str("d1"), str(`{"user_id": ["alice", 42]}`))),
		insertMsg(1, tuple(nil, nil, str(`{"user_id": "alice"}`))),    // no id: counted
		insertMsg(1, tuple(str("\x00u"), str("d2"), str(`not json`))), // unreadable subject: counted
		insertMsg(1, tuple(nil, str("d3"), nil)),                      // about nobody: nothing to record
		relationMsg(2, "public", "other", "id"),
		insertMsg(2, tuple(str("x"))), // not configured
	)
	require.NoError(t, err)
	require.Equal(t, []ledger.Change{{Kind: ledger.ChangeWrite, Store: ledger.StorePostgres, Table: "public.docs", RecordID: "d1",
		Subjects: []ledger.SubjectHash{hasher.Hash("alice"), hasher.Hash("42"), hasher.Hash("carol")}}}, changes)
	require.Equal(t, int64(1), d.stats.NoID.Load())
	require.Equal(t, int64(1), d.stats.BadSubject.Load())
}

func TestDecoder_MalformedMessagesAreErrorsNotPanics(t *testing.T) {
	d := testDecoder(t)
	rel := relationMsg(1, "public", "docs", "id", "owner")
	for name, msg := range map[string][]byte{
		"a tuple cut short":       insertMsg(1, tuple(str("d1"), str("alice")))[:12],
		"a length past the end":   append(insertMsg(1, binary.BigEndian.AppendUint16(nil, 1)), 't', 0x7f, 0xff, 0xff, 0xff),
		"a relation with no name": []byte{'R', 0, 0, 0, 1},
		"an unknown message":      {'?'},
		"nothing":                 {},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := decodeAll(t, d, rel, msg)
			require.Error(t, err)
		})
	}
}

func FuzzDecoder(f *testing.F) {
	f.Add(insertMsg(1, tuple(str("d1"), str("alice"))))
	f.Add(insertMsg(1, tuple(nil, str("\x00u"))))
	f.Add([]byte{'U', 0, 0, 0, 1, 'K', 0, 1, 't', 0, 0, 0, 1, 'x', 'N', 0, 0})
	f.Add([]byte{'D', 0, 0, 0, 1, 'K', 0, 1, 't', 0, 0, 0, 1, 'x'})
	f.Add([]byte{'T', 0, 0, 0, 1, 0, 0, 0, 0, 1})
	f.Add(relationMsg(1, "public", "docs", "id", "owner"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		d := testDecoder(t)
		if _, err := decodeAll(t, d, relationMsg(1, "public", "docs", "id", "owner"), msg); err != nil {
			require.ErrorIs(t, err, errMalformed)
		}
	})
}
