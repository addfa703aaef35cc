package engine

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"sort"
	"time"

	"github.com/lethe-privacy/lethe/connector"
)

// journalState is what the engine keeps in the journal for one request.
// It is rewritten (durably) before every step that cannot be repeated
// blindly.
type journalState struct {
	Sealed     []byte       `json:"sealed,omitempty"` // the subject, sealed; erased when finished
	Commitment string       `json:"commitment"`       // the data subject's commitment
	Layers     []layerState `json:"layers"`
	// Payload is the signed certificate payload and Signature its
	// signature, kept before the log append so that a resumed request
	// issues the same certificate, never a second one.
	Payload []byte `json:"payload,omitempty"`
	LogSize int64  `json:"log_size,omitempty"` // log size before the append (where to look for our leaf after a crash)
	// Horizon is what the stores said, when the request was certified,
	// of the copies its deletes did not reach (Config.Horizons).
	Horizon   []connector.Horizon `json:"horizon,omitempty"`
	Error     string              `json:"error,omitempty"`
	Attempts  int                 `json:"attempts,omitempty"`
	Completed bool                `json:"completed,omitempty"`
}

type layerState struct {
	Store     string   `json:"store"`
	Table     string   `json:"table"`
	Requested int64    `json:"requested"` // ledger records for the subject
	Deleted   []string `json:"deleted"`   // ids deleted, journaled before the store committed
	Residual  int64    `json:"residual"`
	Done      bool     `json:"done"`
	// Unverified is set while the layer's last verification still found
	// records: the request stays open and the layer is tried again later.
	Unverified bool `json:"unverified,omitempty"`
	// How absence was verified, for the certificate.
	VerifyMethod  string   `json:"verify_method"`
	VerifyQueries []string `json:"verify_queries"`
	// Physical is what the layer's page scan found after the delete, when
	// it looks (nil otherwise).
	Physical *connector.Physical `json:"physical,omitempty"`
	// PhysicalBatch is when the batch that runs the layer's deferred
	// physical steps for this forget is due (physicalbatch.go); zero when
	// they ran inside the forget.
	PhysicalBatch time.Time `json:"physical_batch,omitzero"`
}

// unverified is the layers whose last verification still found records.
func (s *journalState) unverified() []layerState {
	var out []layerState
	for _, l := range s.Layers {
		if !l.Done && l.Unverified {
			out = append(out, l)
		}
	}
	return out
}

// gone is every id the forget removed from the layer, sorted.
func (l layerState) gone() []string {
	out := append([]string(nil), l.Deleted...)
	sort.Strings(out)
	return out
}

func union(a, b []string) []string {
	set := map[string]bool{}
	out := append([]string(nil), a...)
	for _, s := range a {
		set[s] = true
	}
	for _, s := range b {
		if !set[s] {
			set[s] = true
			out = append(out, s)
		}
	}
	return out
}

func (s *journalState) marshal() []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // only plain types: cannot fail
	}
	return b
}

func parseState(b []byte) (*journalState, error) {
	var s journalState
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, errors.New("engine: the journal holds an unreadable request state")
	}
	return &s, nil
}

// sealer encrypts the subject of an open request.
type sealer struct{ aead cipher.AEAD }

func newSealer(key []byte) sealer {
	block, err := aes.NewCipher(key[:32])
	if err != nil {
		panic(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return sealer{aead}
}

// seal binds the ciphertext to the request id, so a sealed subject cannot
// be moved to another request.
func (s sealer) seal(requestID, subject string) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, []byte(subject), []byte(requestID))
}

func (s sealer) open(requestID string, sealed []byte) (string, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return "", errors.New("engine: the sealed subject is truncated")
	}
	p, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(requestID))
	if err != nil {
		return "", errors.New("engine: the sealed subject does not open (was the subject salt changed?)")
	}
	return string(p), nil
}
