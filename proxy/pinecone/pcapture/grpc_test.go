package pcapture_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	gopinecone "github.com/pinecone-io/go-pinecone/v5/pinecone"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/lethe-privacy/lethe/test/pinecone/sdktest"
)

// go-pinecone's writes (gRPC) are recorded and settled from the call's
// trailers: upserts confirmed, an update that sets the subject moves the
// record, a delete by id marks it deleted.
func TestGRPC_GoSDKWritesAreRecordedAndSettled(t *testing.T) {
	r := newRig(t, rigOptions{})
	idx := sdktest.GoIndex(t, r.url, apiKey, "notes", nil)
	ctx := sdktest.Context(t)
	n, err := idx.UpsertVectors(ctx, []*gopinecone.Vector{
		sdktest.Vec("a1", []float32{0.1, 0.2}, sdktest.Meta(t, map[string]any{"user_id": "alice", "text": "hi"})),
		sdktest.Vec("b1", []float32{0.3, 0.4}, sdktest.Meta(t, map[string]any{"user_id": "bob"})),
	})
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	r.eventually(t, "alice", "docs/notes/a1 confirmed")

	require.NoError(t, idx.UpdateVector(ctx, &gopinecone.UpdateVectorRequest{Id: "a1", Metadata: sdktest.Meta(t, map[string]any{"user_id": "bob"})}))
	r.eventually(t, "alice", "docs/notes/a1 deleted")
	r.eventually(t, "bob", "docs/notes/a1 confirmed", "docs/notes/b1 confirmed")

	require.NoError(t, idx.DeleteVectorsById(ctx, []string{"b1"}))
	r.eventually(t, "bob", "docs/notes/a1 confirmed", "docs/notes/b1 deleted")

	// go-pinecone names the default namespace "__default__".
	def := sdktest.GoIndex(t, r.url, apiKey, "", nil)
	_, err = def.UpsertVectors(ctx, []*gopinecone.Vector{sdktest.Vec("c1", []float32{1, 0}, sdktest.Meta(t, map[string]any{"user_id": "carol"}))})
	require.NoError(t, err)
	r.eventually(t, "carol", "docs/__default__/c1 confirmed")
	assert.Empty(t, r.pending(t))
}

// Refusals reach go-pinecone as gRPC statuses whose message starts with
// the LT code, and nothing reaches the upstream.
func TestGRPC_RefusalsAreStatuses(t *testing.T) {
	r := newRig(t, rigOptions{})
	idx := sdktest.GoIndex(t, r.url, apiKey, "notes", nil)
	ctx := sdktest.Context(t)

	_, err := idx.UpdateVectorsByMetadata(ctx, &gopinecone.UpdateVectorsByMetadataRequest{
		Filter: sdktest.Meta(t, map[string]any{"genre": "x"}), Metadata: sdktest.Meta(t, map[string]any{"user_id": "bob"})})
	assert.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	assert.True(t, strings.HasPrefix(status.Convert(err).Message(), "LT001 "), "%v", err)

	r.tombs.Set(r.hasher.Hash("alice"), true)
	_, err = idx.UpsertVectors(ctx, []*gopinecone.Vector{sdktest.Vec("a1", []float32{1, 0}, sdktest.Meta(t, map[string]any{"user_id": "alice"}))})
	assert.Equal(t, codes.FailedPrecondition, status.Code(err), "%v", err)
	assert.True(t, strings.HasPrefix(status.Convert(err).Message(), "LT003 "), "%v", err)
	assert.Equal(t, 0, r.received.count("/VectorService/Upsert")+r.received.count("/VectorService/Update"))

	require.NoError(t, r.ledger.Close())
	_, err = idx.UpsertVectors(ctx, []*gopinecone.Vector{sdktest.Vec("b1", []float32{1, 0}, sdktest.Meta(t, map[string]any{"user_id": "bob"}))})
	assert.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
	assert.True(t, strings.HasPrefix(status.Convert(err).Message(), "LT002 "), "%v", err)
	assert.Equal(t, 0, r.received.count("/VectorService/Upsert"))
}

// An upstream refusal answered trailers-only (wrong API key) drops the
// intent.
func TestGRPC_UpstreamRefusalDropsTheIntent(t *testing.T) {
	r := newRig(t, rigOptions{})
	idx := sdktest.GoIndex(t, r.url, "wrong-key", "notes", nil)
	_, err := idx.UpsertVectors(sdktest.Context(t), []*gopinecone.Vector{sdktest.Vec("a1", []float32{1, 0}, sdktest.Meta(t, map[string]any{"user_id": "alice"}))})
	require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
	require.Eventually(t, func() bool { return len(r.pending(t)) == 0 }, 20*time.Second, 20*time.Millisecond)
	assert.Empty(t, r.records(t, "alice"))
}

// Bodies that are not one readable protobuf message are refused
// INVALID_ARGUMENT without reaching the upstream, and the connection
// serves the next call.
func TestGRPC_MalformedMessagesAreRefused(t *testing.T) {
	r := newRig(t, rigOptions{})
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: &protocols}}
	frame := func(flag byte, msg []byte, declared int) []byte {
		b := []byte{flag, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(b[1:], uint32(declared))
		return append(b, msg...)
	}
	// UpsertRequest{vectors: Vector{id: "a1", metadata: <truncated Struct>}}.
	truncated := []byte{0x0a, 0x08, 0x0a, 0x02, 'a', '1', 0x1a, 0x09, 0x0a, 0x07}
	valid := []byte{0x0a, 0x0a, 0x0a, 0x02, 'a', '1', 0x12, 0x04, 0x00, 0x00, 0x80, 0x3f} // values: [1]
	for name, body := range map[string][]byte{
		"truncated protobuf":  frame(0, truncated, len(truncated)),
		"wire type 7":         frame(0, []byte{0x0f, 0x00}, 2),
		"compressed":          frame(1, valid, len(valid)),
		"short prefix":        {0, 0},
		"length past the end": frame(0, valid, len(valid)+4),
		"two messages":        append(frame(0, valid, len(valid)), frame(0, valid, len(valid))...),
	} {
		code, msg := grpcCall(t, client, r.url+"/VectorService/Upsert", body)
		assert.Equal(t, "3", code, name)
		assert.Contains(t, msg, "cannot read the upsert request", name)
	}
	assert.Equal(t, 0, r.received.count("/VectorService/Upsert"))
	code, _ := grpcCall(t, client, r.url+"/VectorService/Upsert", frame(0, valid, len(valid)))
	assert.Equal(t, "0", code)
}

// grpcCall makes one unary call by hand and returns its grpc-status and
// grpc-message.
func grpcCall(t *testing.T, client *http.Client, url string, body []byte) (string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Api-Key", apiKey)
	req.Header.Set("TE", "trailers")
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	if s := resp.Header.Get("Grpc-Status"); s != "" {
		return s, resp.Header.Get("Grpc-Message")
	}
	return resp.Trailer.Get("Grpc-Status"), resp.Trailer.Get("Grpc-Message")
}

// A gRPC write method called other than as gRPC over HTTP/2 (gRPC-Web, or
// HTTP/1.1), or spelled differently, is refused LT004 and not forwarded.
func TestGRPC_WriteMethodsInOtherFormsAreRefused(t *testing.T) {
	r := newRig(t, rigOptions{})
	var h2c http.Protocols
	h2c.SetUnencryptedHTTP2(true)
	clients := map[string]*http.Client{"http/1.1": http.DefaultClient, "h2c": {Transport: &http.Transport{Protocols: &h2c}}}
	for _, tc := range []struct{ client, path, contentType string }{
		{"http/1.1", "/VectorService/Upsert", "application/grpc"},
		{"h2c", "/VectorService/Upsert", "application/grpc-web+proto"},
		{"h2c", "/VectorService/Update", "application/json"},
		{"h2c", "/vectorservice/delete", "application/grpc"},
		{"h2c", "//VectorService/Upsert", "application/grpc"},
	} {
		req, err := http.NewRequest(http.MethodPost, r.url+tc.path, bytes.NewReader([]byte{0, 0, 0, 0, 0}))
		require.NoError(t, err)
		req.Header.Set("Content-Type", tc.contentType)
		resp, err := clients[tc.client].Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		msg := resp.Header.Get("Grpc-Message") + string(body)
		assert.Contains(t, msg, "LT004", "%+v", tc)
	}
	assert.Zero(t, r.received.total(), "nothing reached the upstream")
}

// A REST write path is a write whatever the content type says (an index
// host may route by path first): a gRPC body there is refused as
// unreadable JSON, a JSON body is captured.
func TestGRPC_ContentTypeDoesNotHideARESTWrite(t *testing.T) {
	r := newRig(t, rigOptions{})
	var h2c http.Protocols
	h2c.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: &h2c}}
	framed := []byte{0, 0, 0, 0, 6, 0x0a, 0x04, 0x0a, 0x02, 'a', '1'}
	code, msg := grpcCall(t, client, r.url+"/vectors/upsert", framed)
	assert.Equal(t, "3", code)
	assert.Contains(t, msg, "cannot read the upsert request")
	assert.Zero(t, r.received.total())

	// The emulator routes by content type and answers UNIMPLEMENTED, so
	// the intent made before forwarding is then dropped.
	grpcCall(t, client, r.url+"/vectors/upsert", []byte(upsertAliceBob))
	assert.Equal(t, 1, r.received.count("/vectors/upsert"))
	assert.Equal(t, int64(1), r.core.Stats.Intents.Load(), "the JSON upsert was made an intent before it was forwarded")
}

// A schema field of a write sent with a wire type the schema does not
// allow (Vector.values as fixed64, whose bytes a schema-driven parser
// reads as further fields, here a metadata naming alice) is refused
// INVALID_ARGUMENT and never reaches the index.
func TestGRPC_SchemaFieldsWithOtherWireTypesAreRefused(t *testing.T) {
	r := newRig(t, rigOptions{})
	// Vector{id: "a", values: fixed64 0, metadata: {}} in an UpsertRequest.
	vec := []byte{0x0a, 0x01, 'a', 0x11, 0, 0, 0, 0, 0, 0, 0, 0, 0x1a, 0x00}
	msg := append([]byte{0x0a, byte(len(vec))}, vec...)
	code, m := grpcCall(t, h2cClient(), r.url+"/VectorService/Upsert", append([]byte{0, 0, 0, 0, byte(len(msg))}, msg...))
	assert.Equal(t, "3", code)
	assert.Contains(t, m, "values: wrong wire type")
	assert.Zero(t, r.received.total())
}

// An upsert of many HTTP/2 DATA frames (100 vectors of 1536 values, about
// 0.6 MB) whose only defect is in its last bytes (the last vector's
// values sent again as fixed64, which a schema-driven parser would read
// as one float and then further fields) is refused, and no byte of it
// reaches the upstream; the same upsert without the defect is forwarded.
func TestGRPC_DefectInTheLastFrameRefusesTheWholeUpsert(t *testing.T) {
	r := newRig(t, rigOptions{})
	values := make([]byte, 4*1536)
	vector := func(i int, defect bool) []byte {
		v := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), fmt.Sprintf("v%d", i))
		v = protowire.AppendBytes(protowire.AppendTag(v, 2, protowire.BytesType), values)
		entry := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "user_id")
		entry = protowire.AppendBytes(protowire.AppendTag(entry, 2, protowire.BytesType),
			protowire.AppendString(protowire.AppendTag(nil, 3, protowire.BytesType), "alice"))
		v = protowire.AppendBytes(protowire.AppendTag(v, 3, protowire.BytesType),
			protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), entry))
		if defect {
			v = protowire.AppendFixed64(protowire.AppendTag(v, 2, protowire.Fixed64Type), 0)
		}
		return v
	}
	upsert := func(defect bool) []byte {
		var msg []byte
		for i := range 100 {
			msg = protowire.AppendBytes(protowire.AppendTag(msg, 1, protowire.BytesType), vector(i, defect && i == 99))
		}
		framed := []byte{0, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(framed[1:], uint32(len(msg)))
		return append(framed, msg...)
	}
	bad := upsert(true)
	require.Greater(t, len(bad), 30*16<<10, "the upsert spans many DATA frames of 16 KiB")
	code, msg := grpcCall(t, h2cClient(), r.url+"/VectorService/Upsert", bad)
	assert.Equal(t, "3", code)
	assert.Contains(t, msg, "vectors[99]: values: wrong wire type")
	assert.Zero(t, r.received.total(), "nothing of the refused upsert reached the upstream")
	assert.Zero(t, r.core.Stats.Intents.Load())

	code, _ = grpcCall(t, h2cClient(), r.url+"/VectorService/Upsert", upsert(false))
	assert.Equal(t, "0", code)
	assert.Equal(t, 1, r.received.count("/VectorService/Upsert"))
}
