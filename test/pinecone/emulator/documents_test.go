package emulator_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// A document delete stays invisible to the documents reads for
// DeleteDelay, with the max indexed LSN below the delete's until then, as
// a vector delete does.
func TestDocuments_DeleteVisibleLateWithLSN(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)}
	_, url := startEmulator(t, emulator.Config{DeleteDelay: 10 * time.Second, Now: clock.Now}, nil)
	up := restJSON(t, url, "POST", "/namespaces/n/documents/upsert", "", strings.NewReader(
		`{"documents":[{"_id":"gone","user_id":"alice","title":"x"},{"_id":"kept","user_id":"bob","title":"y"}]}`))
	require.Equal(t, http.StatusAccepted, up.status, up.body)
	assert.JSONEq(t, `{"upserted_count":2}`, up.body)
	upLSN := lsnOf(t, up, "x-pinecone-request-lsn")

	del := restJSON(t, url, "POST", "/namespaces/n/documents/delete", "", strings.NewReader(`{"filter":{"user_id":"alice"}}`))
	require.Equal(t, http.StatusOK, del.status, del.body)
	assert.JSONEq(t, `{"matched_records":1}`, del.body)
	delLSN := lsnOf(t, del, "x-pinecone-request-lsn")
	require.Greater(t, delLSN, upLSN)

	reads := func() []restResponse {
		return []restResponse{
			restJSON(t, url, "POST", "/namespaces/n/documents/fetch", "", strings.NewReader(`{"ids":["gone"]}`)),
			restJSON(t, url, "POST", "/namespaces/n/documents/fetch", "", strings.NewReader(`{"filter":{"user_id":"alice"}}`)),
			restJSON(t, url, "POST", "/namespaces/n/documents/list", "", strings.NewReader(`{}`)),
			restJSON(t, url, "POST", "/namespaces/n/documents/search", "", strings.NewReader(
				`{"score_by":[{"type":"text","fields":["title"],"query":"x"}],"top_k":5}`)),
		}
	}
	clock.Advance(9 * time.Second)
	for _, r := range reads() {
		require.Equal(t, http.StatusOK, r.status, r.body)
		assert.Contains(t, r.body, `"gone"`)
		assert.Less(t, lsnOf(t, r, "x-pinecone-max-indexed-lsn"), delLSN)
	}
	clock.Advance(time.Second)
	for _, r := range reads() {
		assert.NotContains(t, r.body, `"gone"`)
		assert.GreaterOrEqual(t, lsnOf(t, r, "x-pinecone-max-indexed-lsn"), delLSN)
	}
}

// Upsert replaces a whole document; update by id patches it and counts
// only documents that exist; update by filter patches every match.
func TestDocuments_UpsertReplacesUpdatePatches(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{}, nil)
	post := func(path, body string) restResponse {
		r := restJSON(t, url, "POST", "/namespaces/__default__/documents/"+path, "", strings.NewReader(body))
		require.Less(t, r.status, 300, r.body)
		return r
	}
	post("upsert", `{"documents":[{"_id":"a","user_id":"alice","year":2020,"tags":["x"]}]}`)
	post("upsert", `{"documents":[{"_id":"a","user_id":"alice","title":"t"}]}`)
	assert.JSONEq(t, `{"documents":{"a":{"_id":"a","user_id":"alice","title":"t"}},"namespace":"__default__","usage":{"read_units":1}}`,
		post("fetch", `{"ids":["a"]}`).body)
	assert.JSONEq(t, `{"matched_records":1}`, post("update", `{"documents":[{"_id":"a","user_id":"carol","_remove_fields":["title"]},{"_id":"b","user_id":"x"}]}`).body)
	assert.JSONEq(t, `{"matched_records":1}`, post("update", `{"filter":{"user_id":{"$eq":"carol"}},"set_fields":{"seen":true}}`).body)
	assert.JSONEq(t, `{"documents":{"a":{"_id":"a","user_id":"carol","seen":true}},"namespace":"__default__","usage":{"read_units":1}}`,
		post("fetch", `{"ids":["a"]}`).body)
	// The empty namespace segment is the default namespace, as for records.
	assert.Contains(t, restJSON(t, url, "POST", "/namespaces//documents/fetch", "", strings.NewReader(`{"ids":["a"]}`)).body, `"carol"`)
}

func TestDocuments_Refusals(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{}, nil)
	for _, tc := range []struct {
		name, path, body string
		message          string
	}{
		{"no documents", "upsert", `{"documents":[]}`, "No documents provided"},
		{"no _id", "upsert", `{"documents":[{"title":"t"}]}`, "no non-empty string"},
		{"only _id", "upsert", `{"documents":[{"_id":"a"}]}`, "no fields besides"},
		{"reserved _ field", "upsert", `{"documents":[{"_id":"a","_values":[1],"t":"x"}]}`, "reserved"},
		{"reserved $ field", "upsert", `{"documents":[{"_id":"a","$t":"x"}]}`, "reserved"},
		{"null field", "upsert", `{"documents":[{"_id":"a","t":null}]}`, "is null"},
		{"nested object", "upsert", `{"documents":[{"_id":"a","t":{"x":1}}]}`, "not a sparse vector"},
		{"update both", "update", `{"documents":[{"_id":"a","t":"x"}],"filter":{"t":"y"}}`, "mutually exclusive"},
		{"update empty filter", "update", `{"filter":{},"set_fields":{"t":"x"}}`, "must not be empty"},
		{"update filter without patch", "update", `{"filter":{"t":"x"}}`, "set_fields or remove_fields"},
		{"update set and remove", "update", `{"documents":[{"_id":"a","t":"x","_remove_fields":["t"]}]}`, "both set and removed"},
		{"delete two selectors", "delete", `{"ids":["a"],"delete_all":true}`, "exactly one of ids, filter or delete_all"},
		{"delete none", "delete", `{}`, "exactly one of ids, filter or delete_all"},
		{"delete empty ids", "delete", `{"ids":[]}`, "at least one document id"},
		{"fetch both", "fetch", `{"ids":["a"],"filter":{"t":"x"}}`, "exactly one of ids and filter"},
		{"fetch ids with page", "fetch", `{"ids":["a"],"pagination_token":"YQ"}`, "only with a filter"},
		{"search no score_by", "search", `{"top_k":1}`, "score_by must hold"},
		{"search query_string", "search", `{"score_by":[{"type":"query_string","query":"x"}],"top_k":1}`, "not emulated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := restJSON(t, url, "POST", "/namespaces/n/documents/"+tc.path, "", strings.NewReader(tc.body))
			assert.GreaterOrEqual(t, resp.status, 400, resp.body)
			assert.Contains(t, resp.body, tc.message)
		})
	}
	assert.Equal(t, http.StatusMethodNotAllowed, restJSON(t, url, "GET", "/namespaces/n/documents/fetch", "", nil).status)
}
