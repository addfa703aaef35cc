package pinecone_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pinecone"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcapture"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcextract"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// gatedHook holds each request until the test lets it go on, then asks
// the real capture Hook.
type gatedHook struct {
	next    pinecone.Hook
	proceed chan struct{}
}

func (h *gatedHook) Request(ix *pinecone.Index, r *http.Request, body []byte) (pinecone.Call, error) {
	<-h.proceed
	return h.next.Request(ix, r, body)
}

// captureRig is a relay with the capture Hook (strict mode, subjects in
// metadata user_id) in front of an emulator index behind a tap.
type captureRig struct {
	relay    string
	emulator string // the tap in front of the emulator
	upstream *tap
	core     *capture.Capture
	ledger   *ledger.SQLite
	hasher   *ledger.Hasher
	tombs    *capture.Tombstones
	hook     *gatedHook
	relayed  *pinecone.Relay
}

func newCaptureRig(t *testing.T) *captureRig {
	t.Helper()
	rig := &captureRig{upstream: newTap(emulator.New(emulator.Config{}).Handler())}
	rig.emulator = serveHTTP(t, rig.upstream, nil)
	var err error
	rig.ledger, err = ledger.OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { rig.ledger.Close() })
	rig.hasher, err = ledger.NewHasher(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, err)
	rig.tombs = capture.NewTombstones()
	rules, err := pcextract.NewRules("docs", map[string][]string{"*": {"user_id"}})
	require.NoError(t, err)
	pgRules, err := extract.NewRules(nil)
	require.NoError(t, err)
	rig.core = capture.New(capture.Config{Rules: pgRules, Ledger: rig.ledger, Hasher: rig.hasher, Mode: capture.Strict,
		Tombstones: rig.tombs, ConfirmHold: time.Millisecond, IntentTimeout: 2 * time.Second})
	t.Cleanup(rig.core.Close)
	rig.hook = &gatedHook{next: pcapture.New(rig.core, []*pcextract.Rules{rules}), proceed: make(chan struct{})}
	rig.relayed, err = pinecone.New(pinecone.Config{Indexes: []*pinecone.Index{index(t, "docs", rig.emulator, nil)}, Hook: rig.hook})
	require.NoError(t, err)
	t.Cleanup(rig.relayed.Close)
	rig.relay = serveOn(t, rig.relayed.Server(nil))
	return rig
}

// grpcVectorUpsert is a gRPC UpsertRequest of one 2-dimensional vector id
// in namespace "n", with metadata user_id when userID is not empty, framed
// as one message.
func grpcVectorUpsert(id, userID string) []byte {
	var values []byte
	for range 2 {
		values = binary.LittleEndian.AppendUint32(values, math.Float32bits(0.5))
	}
	vec := protoBytes(protoBytes(nil, 1, []byte(id)), 2, values)
	if userID != "" {
		entry := protoBytes(protoBytes(nil, 1, []byte("user_id")), 2, protoBytes(nil, 3, []byte(userID)))
		vec = protoBytes(vec, 3, protoBytes(nil, 1, entry))
	}
	msg := protoBytes(protoBytes(nil, 1, vec), 2, []byte("n"))
	return grpcFrame(0, len(msg), msg)
}

// grpcUpdateByFilter is a gRPC UpdateRequest setting metadata user_id to
// userID on the records of namespace "n" whose genre is "x": a write
// strict mode cannot attribute.
func grpcUpdateByFilter(userID string) []byte {
	field := func(name, text string) []byte {
		entry := protoBytes(protoBytes(nil, 1, []byte(name)), 2, protoBytes(nil, 3, []byte(text)))
		return protoBytes(nil, 1, entry)
	}
	msg := protoBytes(nil, 3, field("user_id", userID))
	msg = protoBytes(msg, 4, []byte("n"))
	msg = protoBytes(msg, 6, field("genre", "x"))
	return grpcFrame(0, len(msg), msg)
}

// restVectorUpsert is the REST upsert of the same vector.
func restVectorUpsert(id, userID string) []byte {
	meta := ""
	if userID != "" {
		meta = fmt.Sprintf(`,"metadata":{"user_id":%q}`, userID)
	}
	return fmt.Appendf(nil, `{"namespace":"n","vectors":[{"id":%q,"values":[0.5,0.5]%s}]}`, id, meta)
}

// Each kind of refusal by the real capture Hook — strict mode's
// unattributed write, a forgotten subject, the LT006 hold after a restore,
// a body it cannot read — made once the emulator has all the relay
// forwards before the decision: the client gets the refusal's code, the
// emulator's request breaks off short of anything it could act on, the
// emulator holds no record afterwards, and the ledger none either.
func TestAttack_Stream_CaptureRefusalsLeaveTheEmulatorEmpty(t *testing.T) {
	type refusal struct {
		name    string
		grpc    bool
		path    string
		body    []byte
		prepare func(*captureRig)
		status  string
	}
	forget := func(rig *captureRig) { rig.tombs.Set(rig.hasher.Hash("alice"), true) }
	hold := func(rig *captureRig) {
		rig.core.Hold(ledger.StorePinecone, capture.Refusal{Code: capture.CodeRestored, Message: "restored", LogReason: "restored"})
	}
	twoMessages := append(grpcVectorUpsert("x", "bob"), grpcVectorUpsert("y", "bob")...)
	cases := []refusal{
		{name: "rest unattributed", path: "/vectors/update",
			body: []byte(`{"filter":{"genre":"x"},"setMetadata":{"user_id":"bob"},"namespace":"n"}`), status: "400 Bad Request"},
		{name: "grpc unattributed", grpc: true, path: "/VectorService/Update", body: grpcUpdateByFilter("bob"), status: "grpc-status 3"},
		{name: "rest forgotten subject", path: "/vectors/upsert", body: restVectorUpsert("x", "alice"), prepare: forget, status: "400 Bad Request"},
		{name: "grpc forgotten subject", grpc: true, body: grpcVectorUpsert("x", "alice"), prepare: forget, status: "grpc-status 9"},
		{name: "rest LT006 hold", path: "/vectors/upsert", body: restVectorUpsert("x", "bob"), prepare: hold, status: "503 Service Unavailable"},
		{name: "grpc LT006 hold", grpc: true, body: grpcVectorUpsert("x", "bob"), prepare: hold, status: "grpc-status 14"},
		{name: "rest records upsert, two values on one line", path: "/records/namespaces/n/upsert",
			body: []byte(`{"_id":"x","user_id":"bob"}{"_id":"y","user_id":"bob"}`), status: "400 Bad Request"},
		{name: "grpc two messages", grpc: true, body: twoMessages, status: "grpc-status 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rig := newCaptureRig(t)
			seeded := `{"namespace":"n","vectors":[{"id":"g","values":[0.5,0.5],"metadata":{"genre":"x","user_id":"carol"}}]}`
			resp := restCall(t, http.DefaultClient, http.MethodPost, rig.emulator+"/vectors/upsert", "", seeded)
			require.Equal(t, http.StatusOK, resp.status, resp.body)
			if c.prepare != nil {
				c.prepare(rig)
			}
			send := streamCases()[0]
			send.path = c.path
			open := bytes.IndexByte(c.body, '}') // the first value's closing byte
			if c.grpc {
				send = streamCases()[1]
				if c.path != "" {
					send.path = c.path
				}
				open = 5 + int(binary.BigEndian.Uint32(c.body[1:5])) - 1
			}
			if !c.grpc && c.path != "/records/namespaces/n/upsert" {
				open = bytes.LastIndexByte(c.body, '}')
			}
			answer := send.send(t, rig.relay, "refused", bytes.NewReader(c.body))
			waitFor(t, func() bool { rec, _ := rig.upstream.get("refused"); return len(rec.received) == open },
				"the emulator gets all the relay forwards before the decision")
			close(rig.hook.proceed)
			assert.Equal(t, c.status, <-answer)
			heldShort(t, rig.upstream, "refused", c.body[:open])
			assert.False(t, actedOn(c.body[:open], c.grpc))

			for _, id := range []string{"x", "y"} {
				resp = restCall(t, http.DefaultClient, http.MethodGet, rig.emulator+"/vectors/fetch?ids="+id+"&namespace=n", "", "")
				require.Equal(t, http.StatusOK, resp.status, resp.body)
				assert.JSONEq(t, `{}`, extractVectors(t, resp.body), "the emulator holds no record %s", id)
			}
			resp = restCall(t, http.DefaultClient, http.MethodGet, rig.emulator+"/vectors/fetch?ids=g&namespace=n", "", "")
			require.Equal(t, http.StatusOK, resp.status, resp.body)
			assert.JSONEq(t, `{"g":{"id":"g","values":[0.5,0.5],"metadata":{"genre":"x","user_id":"carol"}}}`, extractVectors(t, resp.body),
				"the record already there is unchanged")
			for _, subject := range []string{"alice", "bob"} {
				recs, err := rig.ledger.BySubject(context.Background(), rig.hasher.Hash(subject))
				require.NoError(t, err)
				assert.Empty(t, recs, "the ledger holds nothing about %s", subject)
			}
			pending, err := rig.ledger.Pending(context.Background())
			require.NoError(t, err)
			assert.Empty(t, pending, "no intent is left pending")
			waitFor(t, func() bool { return rig.relayed.BufferedBytes() == 0 }, "the charge is returned")
		})
	}
}
