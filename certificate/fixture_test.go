package certificate

import (
	"github.com/lethe-privacy/lethe/translog"

	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"
)

// Fixed instants, so certificates and their signatures are reproducible
// (Ed25519 is deterministic) and the golden files stay byte-identical.
var (
	testIssued   = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	testNow      = time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	testRotation = time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC) // old key's not_after, new key's not_before
)

const testOrigin = "log.lethe.example/test"

// testSigner loads the test key of a label from testdata/vectors/keys,
// committed so that the test vectors can be signed again alike (Ed25519
// is deterministic). With -update, a missing key is derived from the
// label and written.
func testSigner(t testing.TB, label string) *Signer {
	t.Helper()
	path := filepath.Join("testdata", "vectors", "keys", label+".pem")
	pemBytes, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && *update {
		seed := sha256.Sum256([]byte("lethe certificate test key: " + label))
		s, err := NewSigner(ed25519.NewKeyFromSeed(seed[:]))
		if err != nil {
			t.Fatal(err)
		}
		if pemBytes, err = s.MarshalPrivateKey(); err != nil {
			t.Fatal(err)
		}
		writeFile(t, path, pemBytes)
	} else if err != nil {
		t.Fatalf("%v; the test keys are committed under testdata/vectors/keys", err)
	}
	s, err := LoadPrivateKey(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fixture holds the keys of the tests: the operator's, its successor after
// rotation, and an attacker's.
type fixture struct {
	op, next, attacker *Signer
	keys               KeySet // op from 2026-01-01 (to testRotation) and next from testRotation
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{op: testSigner(t, "operator"), next: testSigner(t, "operator-next"), attacker: testSigner(t, "attacker")}
	old := f.op.TrustedKey(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	old.NotAfter = testRotation
	var err error
	if f.keys, err = NewKeySet(testOrigin, old, f.next.TrustedKey(testRotation)); err != nil {
		t.Fatal(err)
	}
	return f
}

func hexOf(s string) string { return hexSHA256(sha256.Sum256([]byte(s))) }

// testPayload is a complete, plausible v1 payload.
func testPayload(t testing.TB, requestID string, issued time.Time) Payload {
	t.Helper()
	ids, err := IDsRoot([]RecordRef{
		{"postgres", "public.langchain_pg_embedding", "7f3c"},
		{"postgres", "public.langchain_pg_embedding", "81aa"},
		{"pinecone", "docs/default", "chunk-12"},
	})
	if err != nil {
		t.Fatal(err)
	}
	secret := sha256.Sum256([]byte("subject secret " + requestID))
	return Payload{
		RequestID:  requestID,
		IssuedAt:   issued,
		ValidUntil: issued.AddDate(10, 0, 0),
		Subject:    Subject{HMAC: hexOf("hmac of alice"), Commitment: commit("alice@example.com", secret[:])},
		Scope:      []Scope{{"postgres", "public.langchain_pg_embedding"}, {"pinecone", "docs/default"}},
		Layers: []Layer{
			{Store: "postgres", Table: "public.langchain_pg_embedding", Requested: 2, Deleted: 2, VerifiedAbsent: true,
				VerifyMethod: "select by id", VerifyQueries: []string{"SELECT count(*) FROM public.langchain_pg_embedding WHERE id = ANY($1)"}},
			{Store: "pinecone", Table: "docs/default", Requested: 1, Deleted: 1, VerifiedAbsent: true, VerifyMethod: "fetch by id"},
		},
		DeletedIDs:  ids,
		RulesSHA256: hexOf("capture rules"),
		Tool:        "lethe-proxy 0.1.0",
		Claim: Claim{
			Statement: "Every record Lethe attributed to this person in the listed tables was deleted and verified absent.",
			Covers:    []string{"postgres public.langchain_pg_embedding", "pinecone docs/default"},
		},
	}
}

// testLog is an in-memory RFC 6962 log: leaves and the stored hashes
// tlog.StoredHashes computes, as lethe's ledger keeps them.
type testLog struct {
	leaves [][]byte
	hashes []tlog.Hash
}

func (l *testLog) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(l.hashes)) {
			return nil, errors.New("test log: no such stored hash")
		}
		out[i] = l.hashes[x]
	}
	return out, nil
}

func (l *testLog) append(t testing.TB, leaf []byte) int64 {
	t.Helper()
	n := int64(len(l.leaves))
	hs, err := tlog.StoredHashes(n, leaf, l)
	if err != nil {
		t.Fatal(err)
	}
	l.leaves = append(l.leaves, leaf)
	l.hashes = append(l.hashes, hs...)
	return n
}

func (l *testLog) appendEvent(t testing.TB, e Event) int64 {
	t.Helper()
	leaf, err := EncodeEvent(e)
	if err != nil {
		t.Fatal(err)
	}
	return l.append(t, leaf)
}

// checkpoint signs the current tree with s.
func (l *testLog) checkpoint(t testing.TB, s *Signer) (translog.Checkpoint, string) {
	t.Helper()
	size := int64(len(l.leaves))
	root, err := tlog.TreeHash(size, l)
	if err != nil {
		t.Fatal(err)
	}
	c := translog.Checkpoint{Origin: testOrigin, Size: size, Root: root}
	return c, signCheckpoint(t, s, c)
}

func (l *testLog) prove(t testing.TB, index int64) tlog.RecordProof {
	t.Helper()
	p, err := tlog.ProveRecord(int64(len(l.leaves)), index, l)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// issue signs p with s and logs it in a fresh log between other events, the
// checkpoint signed by logKey (s when nil).
func issue(t testing.TB, s *Signer, p Payload, logKey *Signer) *Envelope {
	t.Helper()
	e, _, err := Sign(s, p)
	if err != nil {
		t.Fatal(err)
	}
	logEnvelope(t, e, logKey, s)
	return e
}

func logEnvelope(t testing.TB, e *Envelope, logKey, s *Signer) {
	t.Helper()
	if logKey == nil {
		logKey = s
	}
	var l testLog
	l.appendEvent(t, Event{Event: EventKeyRotated, KeyID: s.KeyID()})
	l.appendEvent(t, Event{Event: EventRequested, RequestID: "req-0001"})
	leaf, err := e.CompletedLeaf()
	if err != nil {
		t.Fatal(err)
	}
	i := l.append(t, leaf)
	l.appendEvent(t, Event{Event: EventRequested, RequestID: "req-0002"})
	l.appendEvent(t, Event{Event: EventReverified, RequestID: "req-0001"})
	_, cp := l.checkpoint(t, logKey)
	e.AttachLog(leaf, i, l.prove(t, i), cp)
}

func marshal(t testing.TB, e *Envelope) []byte {
	t.Helper()
	b, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// editJSON decodes data, lets edit change it, and encodes it again.
func editJSON(t testing.TB, data []byte, edit func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// signedPayload signs payload bytes that Sign would refuse, and logs them.
func signedPayload(t testing.TB, s *Signer, payload []byte) []byte {
	t.Helper()
	e := signBytes(s, payload)
	logEnvelope(t, e, nil, s)
	return marshal(t, e)
}

// payloadMap is testPayload after Sign's normalisation, as a JSON object.
func payloadMap(t testing.TB, f *fixture) map[string]any {
	t.Helper()
	_, payload, err := Sign(f.op, testPayload(t, "req-0042", testIssued))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
