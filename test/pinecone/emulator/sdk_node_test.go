package emulator_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

// TestNodeSDK_RESTDataPlane runs the Node SDK's upsert, upsertRecords
// (named and default namespace), fetch, query (filter, by id), update,
// listPaginated, describeIndexStats, deleteOne, deleteMany (ids, filter),
// deleteAll and two refusals against the emulator, in cleartext and over TLS.
func TestNodeSDK_RESTDataPlane(t *testing.T) {
	node, dir := sdktest.Node(t, "@pinecone-database/pinecone")
	cert := sdktest.NewCert(t, "pinecone emulator test")
	for _, tc := range []struct {
		name string
		tls  bool
	}{{"cleartext", false}, {"tls", true}} {
		t.Run(tc.name, func(t *testing.T) {
			env := os.Environ()
			var url string
			if tc.tls {
				_, url = startEmulator(t, emulator.Config{APIKey: testAPIKey}, cert.Server)
				env = append(env, "NODE_EXTRA_CA_CERTS="+cert.PEMPath)
			} else {
				_, url = startEmulator(t, emulator.Config{APIKey: testAPIKey}, nil)
			}
			assert.JSONEq(t, sdktest.NodeSDKReport, sdktest.RunNode(t, node, dir, env, "pinecone-sdk.mjs", url, testAPIKey))
		})
	}
}

// TestLangChainPineconeStore runs LangChain.js PineconeStore
// (@langchain/pinecone 1.x beside the SDK 5.x it peers on): addDocuments
// with ids and nested metadata (flattened by LangChain), similaritySearch
// with and without a filter, delete by ids and by filter.
func TestLangChainPineconeStore(t *testing.T) {
	node, dir := sdktest.Node(t, "@langchain/pinecone")
	_, url := startEmulator(t, emulator.Config{APIKey: testAPIKey}, nil)
	assert.JSONEq(t, `{
		"addedIds": ["cat-1", "dog-1"],
		"catSearch": {"pageContent": "a cat on a mat", "metadata": {"source.page": 3, "subject": "alice"}},
		"filteredSearch": ["a dog in a fog"],
		"storedCat": {"source.page": 3, "subject": "alice", "text": "a cat on a mat"},
		"afterDeleteIds": ["dog-1"],
		"afterDeleteFilter": []
	}`, sdktest.RunNode(t, node, dir, os.Environ(), "pinecone-langchain.mjs", url, testAPIKey))
}

// TestNodeSDK9_Documents runs @pinecone-database/pinecone 9.x's documents
// API (API version 2026-07) against the emulator: upsert, fetch by ids and
// by filter with pages, list, search, update by id and by filter, delete by
// ids, by filter and all, and two refusals.
func TestNodeSDK9_Documents(t *testing.T) {
	node, dir := sdktest.Node(t, "@pinecone-database/pinecone9")
	_, url := startEmulator(t, emulator.Config{APIKey: testAPIKey}, nil)
	assert.JSONEq(t, sdktest.NodeDocumentsReport, sdktest.RunNode(t, node, dir, os.Environ(), "pinecone9-documents.mjs", url, testAPIKey))
}
