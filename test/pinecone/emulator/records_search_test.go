package emulator_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// TestSearchRecords_TextVectorAndIDQueries: POST
// /records/namespaces/{ns}/search answers the Node SDK 9.x's
// searchRecords and go-pinecone's SearchRecords: a text query ranks the
// records by the query words their string fields hold, a query by id of a
// text-only record uses its text, a vector query scores records with
// values, filter and fields apply, and what is not emulated is refused.
func TestSearchRecords_TextVectorAndIDQueries(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{APIKey: testAPIKey}, nil)
	resp := restJSON(t, url, http.MethodPost, "/records/namespaces/r/upsert", testAPIKey, strings.NewReader(
		`{"_id":"cat","chunk_text":"a cat on a mat","user_id":"alice"}`+"\n"+
			`{"_id":"dog","chunk_text":"a dog in the fog","user_id":"bob"}`+"\n"+
			`{"_id":"both","chunk_text":"a cat and a dog","user_id":"bob","year":2024}`))
	require.Equal(t, http.StatusCreated, resp.status, resp.body)
	resp = restJSON(t, url, http.MethodPost, "/vectors/upsert", testAPIKey, strings.NewReader(
		`{"namespace":"v","vectors":[{"id":"x","values":[1,0],"metadata":{"user_id":"alice"}},{"id":"y","values":[0,1],"metadata":{"user_id":"bob"}}]}`))
	require.Equal(t, http.StatusOK, resp.status, resp.body)

	search := func(ns, body string) restResponse {
		t.Helper()
		return restJSON(t, url, http.MethodPost, "/records/namespaces/"+ns+"/search", testAPIKey, strings.NewReader(body))
	}
	resp = search("r", `{"query":{"top_k":2,"inputs":{"text":"Cat DOG"}},"fields":["user_id"]}`)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	assert.JSONEq(t, `{"result":{"hits":[{"_id":"both","_score":2,"fields":{"user_id":"bob"}},{"_id":"cat","_score":1,"fields":{"user_id":"alice"}}]},
		"usage":{"read_units":1,"embed_total_tokens":2}}`, resp.body)
	assert.NotEmpty(t, resp.header.Get("x-pinecone-max-indexed-lsn"))

	resp = search("r", `{"query":{"top_k":5,"id":"cat","filter":{"user_id":{"$eq":"bob"}}}}`)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	assert.JSONEq(t, `{"result":{"hits":[{"_id":"both","_score":3,"fields":{"chunk_text":"a cat and a dog","user_id":"bob","year":2024}},
		{"_id":"dog","_score":2,"fields":{"chunk_text":"a dog in the fog","user_id":"bob"}}]},"usage":{"read_units":1,"embed_total_tokens":6}}`, resp.body,
		"the words of cat's text: alice, a, cat, on, a, mat (both holds a, cat, a; dog a, a)")

	resp = search("v", `{"query":{"top_k":1,"vector":{"values":[0.1,1]}},"fields":[]}`)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	assert.Contains(t, resp.body, `"_id":"y"`)
	assert.Contains(t, resp.body, `"fields":{}`)

	for body, want := range map[string]string{
		`{"query":{"top_k":1}}`:                                              "exactly one of inputs, vector and id",
		`{"query":{"top_k":1,"id":"cat","inputs":{"text":"x"}}}`:             "exactly one of inputs, vector and id",
		`{"query":{"top_k":0,"inputs":{"text":"x"}}}`:                        "top_k must be between",
		`{"query":{"top_k":1,"inputs":{"text":7}}}`:                          `a string`,
		`{"query":{"top_k":1,"match_terms":{"terms":["a"]},"id":"cat"}}`:     "query.match_terms is not emulated",
		`{"query":{"top_k":1,"id":"cat"},"rerank":{"model":"bge-reranker"}}`: "rerank is not emulated",
	} {
		resp = search("r", body)
		assert.GreaterOrEqual(t, resp.status, 400, body)
		assert.Contains(t, resp.body, want, body)
	}
}
