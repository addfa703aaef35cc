package emulator_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// A re-created index holds nothing and numbers its writes from the first
// LSN again, below the LSNs the old index gave.
func TestRecreate_DropsRecordsAndRestartsTheLSNs(t *testing.T) {
	srv, url := startEmulator(t, emulator.Config{}, nil)
	for range 3 {
		resp := restJSON(t, url, http.MethodPost, "/vectors/upsert", "", strings.NewReader(`{"namespace":"n","vectors":[{"id":"a","values":[1,2]}]}`))
		require.Equal(t, http.StatusOK, resp.status, resp.body)
	}
	list := restJSON(t, url, http.MethodGet, "/vectors/list?namespace=n", "", nil)
	assert.Equal(t, "3", list.header.Get("X-Pinecone-Max-Indexed-Lsn"))

	srv.Recreate()
	list = restJSON(t, url, http.MethodGet, "/vectors/list?namespace=n", "", nil)
	assert.Equal(t, "0", list.header.Get("X-Pinecone-Max-Indexed-Lsn"))
	assert.NotContains(t, list.body, `"a"`)
	resp := restJSON(t, url, http.MethodPost, "/vectors/upsert", "", strings.NewReader(`{"namespace":"n","vectors":[{"id":"b","values":[1,2,3]}]}`))
	require.Equal(t, http.StatusOK, resp.status, "the new index takes its dimension from its first write: %s", resp.body)
	assert.Equal(t, "1", resp.header.Get("X-Pinecone-Request-Lsn"))
}

// Each namespace numbers its writes in its own sequence.
func TestLSN_OneSequencePerNamespace(t *testing.T) {
	_, url := startEmulator(t, emulator.Config{}, nil)
	write := func(ns string) string {
		resp := restJSON(t, url, http.MethodPost, "/vectors/upsert", "", strings.NewReader(`{"namespace":"`+ns+`","vectors":[{"id":"a","values":[1,2]}]}`))
		require.Equal(t, http.StatusOK, resp.status, resp.body)
		return resp.header.Get("X-Pinecone-Request-Lsn")
	}
	assert.Equal(t, "1", write("a"))
	assert.Equal(t, "2", write("a"))
	assert.Equal(t, "1", write("b"), "writes to one namespace do not increase another's LSN")
	assert.Equal(t, "2", restJSON(t, url, http.MethodGet, "/vectors/list?namespace=a", "", nil).header.Get("X-Pinecone-Max-Indexed-Lsn"))
	assert.Equal(t, "1", restJSON(t, url, http.MethodGet, "/vectors/list?namespace=b", "", nil).header.Get("X-Pinecone-Max-Indexed-Lsn"))
}
