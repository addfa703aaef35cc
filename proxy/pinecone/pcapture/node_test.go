package pcapture_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

// The Node SDK (REST) through capture gets the same answers as against
// the emulator directly, and the ledger holds what its calls wrote:
// upserts and records upserts confirmed, the setMetadata update moving
// n1 from alice to zoe, deletes by id marked, and the closing deleteAll of
// namespace "node" marking every record of it deleted (the delete by
// filter before it leaves the ledger alone: forget checks the store);
// the default namespace's d1 stays confirmed.
func TestNodeSDK_WritesAreCaptured(t *testing.T) {
	node, dir := sdktest.Node(t, "@pinecone-database/pinecone")
	r := newRig(t, rigOptions{index: "emulated", rules: map[string][]string{"*": {"subject"}}})
	assert.JSONEq(t, sdktest.NodeSDKReport, sdktest.RunNode(t, node, dir, os.Environ(), "pinecone-sdk.mjs", r.url, apiKey))
	r.eventually(t, "alice", "emulated/node/n1 deleted", "emulated/node/n3 deleted")
	r.eventually(t, "zoe", "emulated/node/n1 deleted")
	r.eventually(t, "bob", "emulated/node/n2 deleted")
	r.eventually(t, "carol", "emulated/node/r1 deleted")
	r.eventually(t, "dave", "emulated/node/r2 deleted")
	r.eventually(t, "erin", "emulated/__default__/d1 confirmed")
	assert.Empty(t, r.pending(t))
}

// LangChain.js PineconeStore's addDocuments are captured with the subject
// in their metadata.
func TestLangChain_AddDocumentsAreCaptured(t *testing.T) {
	node, dir := sdktest.Node(t, "@langchain/pinecone")
	r := newRig(t, rigOptions{index: "emulated", rules: map[string][]string{"lc": {"subject"}}})
	out := sdktest.RunNode(t, node, dir, os.Environ(), "pinecone-langchain.mjs", r.url, apiKey)
	assert.Contains(t, out, `"addedIds":["cat-1","dog-1"]`)
	r.eventually(t, "alice", "emulated/lc/cat-1 deleted")
	r.eventually(t, "bob", "emulated/lc/dog-1 confirmed")
}
