package pcextract

import (
	"testing"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Subjects, ids and namespaces that are not valid UTF-8 (a lone surrogate
// escape, invalid bytes) are refused: the ledger would keep U+FFFD or the
// raw bytes where the store keeps another spelling. The error names the
// place, never the value; paired surrogates and escaped backslashes
// before a 'u' are valid.
func TestPineconeStrings_NotUTF8IsRefused(t *testing.T) {
	r := pcRules(t)
	for name, body := range map[string]string{
		"lone high surrogate subject": `{"vectors":[{"id":"a","values":[1],"metadata":{"user_id":"x\ud800"}}]}`,
		"lone low surrogate subject":  `{"vectors":[{"id":"a","values":[1],"metadata":{"user_id":"\udc00y"}}]}`,
		"high then other escape":      `{"vectors":[{"id":"a","values":[1],"metadata":{"user_id":"\ud800\u0041"}}]}`,
		"invalid bytes subject":       "{\"vectors\":[{\"id\":\"a\",\"values\":[1],\"metadata\":{\"user_id\":\"x\xffy\"}}]}",
		"subject in a list":           `{"vectors":[{"id":"a","values":[1],"metadata":{"user_id":["ok","\ud800"]}}]}`,
		"id":                          `{"vectors":[{"id":"a\ud800","values":[1],"metadata":{"user_id":"u"}}]}`,
		"namespace":                   `{"namespace":"n\udfff","vectors":[{"id":"a","values":[1],"metadata":{"user_id":"u"}}]}`,
	} {
		_, err := r.UpsertREST([]byte(body))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "is not valid UTF-8", name)
		assert.NotContains(t, err.Error(), `\ud800`, name)
	}
	for name, call := range map[string]func() ([]extract.Tag, error){
		"update id": func() ([]extract.Tag, error) {
			return r.UpdateREST([]byte(`{"id":"\ud800","setMetadata":{"user_id":"u"}}`))
		},
		"update subject": func() ([]extract.Tag, error) {
			return r.UpdateREST([]byte(`{"id":"a","setMetadata":{"user_id":"\ud800"}}`))
		},
		"delete id": func() ([]extract.Tag, error) { return r.DeleteREST([]byte(`{"ids":["a","\udc00"]}`)) },
		"records id": func() ([]extract.Tag, error) {
			return r.UpsertRecordsREST("", []byte(`{"_id":"\ud800","user_id":"u"}`))
		},
		"records subject": func() ([]extract.Tag, error) {
			return r.UpsertRecordsREST("", []byte(`{"_id":"a","user_id":"\ud800"}`))
		},
		"records namespace": func() ([]extract.Tag, error) {
			return r.UpsertRecordsREST("n\xff", []byte(`{"_id":"a","user_id":"u"}`))
		},
		"gRPC subject": func() ([]extract.Tag, error) {
			return r.UpsertGRPC(pbUpsert(pbAbsent, pbVector("a", 1, pbStruct(pbEntry("user_id", pbValueString("x\xff"))))))
		},
		"gRPC list subject": func() ([]extract.Tag, error) {
			return r.UpsertGRPC(pbUpsert(pbAbsent, pbVector("a", 1, pbStruct(pbEntry("user_id", pbValueList(pbValueString("\xed\xa0\x80")))))))
		},
		"gRPC id":        func() ([]extract.Tag, error) { return r.UpsertGRPC(pbUpsert(pbAbsent, pbVector("a\xff", 1, nil))) },
		"gRPC namespace": func() ([]extract.Tag, error) { return r.UpsertGRPC(pbUpsert("n\xff", pbVector("a", 1, nil))) },
		"gRPC update id": func() ([]extract.Tag, error) {
			return r.UpdateGRPC(pbUpdate("a\xff", pbStruct(pbEntry("user_id", pbValueString("u"))), pbAbsent, nil, false))
		},
		"gRPC delete id": func() ([]extract.Tag, error) { return r.DeleteGRPC(pbDelete([]string{"a\xff"}, false, pbAbsent, nil)) },
		"gRPC delete namespace": func() ([]extract.Tag, error) {
			return r.DeleteGRPC(pbDelete([]string{"a"}, false, "n\xff", nil))
		},
	} {
		_, err := call()
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "is not valid UTF-8", name)
	}

	tags, err := r.UpsertREST([]byte(`{"vectors":[{"id":"a\\ud800","values":[1],"metadata":{"user_id":"\ud83d\ude00 \u00e9\\u"}}]}`))
	require.NoError(t, err)
	assert.Equal(t, `a\ud800`, tags[0].ID)
	assert.Equal(t, []string{"😀 é\\u"}, tags[0].Subjects)
}
