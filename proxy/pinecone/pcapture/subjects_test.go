package pcapture_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// numberSpellings are REST spellings of the number Pinecone stores as 4242.
var numberSpellings = []string{"4242", "4242.0", "4.242e3", "4242E0", "42420e-1"}

// A number subject is recorded under the HMAC of its one text whatever its
// spelling, so a forgotten 4242 cannot be written again as 4242.0 or
// 4.242e3 (LT003); a number beyond float64 is refused INVALID_ARGUMENT.
func TestREST_NumberSubjectsAreOneSubjectHoweverSpelled(t *testing.T) {
	r := newRig(t, rigOptions{})
	c := http.DefaultClient
	var want []string
	for i, s := range numberSpellings {
		body := fmt.Sprintf(`{"namespace":"n","vectors":[{"id":"v%d","values":[1],"metadata":{"user_id":%s}}]}`, i, s)
		require.Equal(t, http.StatusOK, post(t, c, r.url, "/vectors/upsert", body).status, s)
		want = append(want, fmt.Sprintf("docs/n/v%d confirmed", i))
	}
	r.eventually(t, "4242", want...)

	r.tombs.Set(r.hasher.Hash("4242"), true)
	for i, s := range numberSpellings {
		body := fmt.Sprintf(`{"namespace":"n","vectors":[{"id":"w%d","values":[1],"metadata":{"user_id":%s}}]}`, i, s)
		a := post(t, c, r.url, "/vectors/upsert", body)
		assert.Equal(t, 9, a.code, s)
		assert.True(t, strings.HasPrefix(a.message, "LT003 "), "%s: %s", s, a.message)
		a = post(t, c, r.url, "/records/namespaces/n/upsert", fmt.Sprintf(`{"_id":"x%d","user_id":%s}`, i, s))
		assert.True(t, strings.HasPrefix(a.message, "LT003 "), "records %s: %s", s, a.message)
	}

	a := post(t, c, r.url, "/vectors/upsert", `{"vectors":[{"id":"big","values":[1],"metadata":{"user_id":1e400}}]}`)
	assert.Equal(t, answer{http.StatusBadRequest, 3, a.message}, a)
	assert.Contains(t, a.message, "too large for a float64")
	assert.Equal(t, len(numberSpellings), r.received.count("/vectors/upsert"), "only the first upserts reached the index")
}

// Subjects, ids and namespaces that are not valid UTF-8 are refused
// INVALID_ARGUMENT before anything reaches the index, over REST and gRPC.
func TestInvalidUTF8_IsRefused(t *testing.T) {
	r := newRig(t, rigOptions{})
	c := http.DefaultClient
	for _, body := range []string{
		`{"vectors":[{"id":"a","values":[1],"metadata":{"user_id":"\ud800"}}]}`,
		"{\"vectors\":[{\"id\":\"a\",\"values\":[1],\"metadata\":{\"user_id\":\"\xff\"}}]}",
		`{"vectors":[{"id":"\udc00","values":[1],"metadata":{"user_id":"bob"}}]}`,
		`{"namespace":"\ud800","vectors":[{"id":"a","values":[1],"metadata":{"user_id":"bob"}}]}`,
	} {
		a := post(t, c, r.url, "/vectors/upsert", body)
		assert.Equal(t, answer{http.StatusBadRequest, 3, a.message}, a, body)
		assert.Contains(t, a.message, "is not valid UTF-8", body)
	}
	a := post(t, c, r.url, "/records/namespaces/n%FF/upsert", `{"_id":"a","user_id":"bob"}`)
	assert.Equal(t, http.StatusBadRequest, a.status)
	assert.Contains(t, a.message, "is not valid UTF-8")

	// UpsertRequest{vectors: Vector{id: "a", metadata: {user_id: "\xff"}}}.
	meta := []byte{0x0a, 0x0e, 0x0a, 0x07, 'u', 's', 'e', 'r', '_', 'i', 'd', 0x12, 0x03, 0x1a, 0x01, 0xff}
	vec := append([]byte{0x0a, 0x01, 'a', 0x1a, byte(len(meta))}, meta...)
	msg := append([]byte{0x0a, byte(len(vec))}, vec...)
	code, m := grpcCall(t, h2cClient(), r.url+"/VectorService/Upsert", append([]byte{0, 0, 0, 0, byte(len(msg))}, msg...))
	assert.Equal(t, "3", code)
	assert.Contains(t, m, "UTF-8")
	assert.Zero(t, r.received.total(), "nothing reached the index")
}

// An update naming its metadata by the proto field's own name,
// set_metadata, which a protojson REST front reads as setMetadata, is
// read too: about a forgotten subject it is refused LT003 and never
// reaches the index.
func TestREST_UpdateWithSetMetadataSnakeCaseIsCaptured(t *testing.T) {
	r := newRig(t, rigOptions{})
	r.tombs.Set(r.hasher.Hash("alice"), true)
	a := post(t, http.DefaultClient, r.url, "/vectors/update", `{"id":"v1","namespace":"n","set_metadata":{"user_id":"alice"}}`)
	assert.Equal(t, 9, a.code, a.message)
	assert.True(t, strings.HasPrefix(a.message, "LT003 "), a.message)
	assert.Zero(t, r.received.count("/vectors/update"))
}
