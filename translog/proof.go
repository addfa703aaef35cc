package translog

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// Proof is an offline-verifiable proof that a record is in the log, in the
// c2sp.org/tlog-proof@v1 text format (https://c2sp.org/tlog-proof):
//
//	c2sp.org/tlog-proof@v1
//	extra <base64>          (optional)
//	index <decimal>
//	<base64 hash>           (zero or more: leaf's sibling first, root's child last)
//	                        (an empty line)
//	<the signed checkpoint, verbatim>
type Proof struct {
	Index      int64
	Hashes     RecordProof
	Checkpoint Checkpoint
	// Extra is opaque application data. The signature does not cover it:
	// never trust it without checking it against the record.
	Extra []byte
}

// proofHeader is the first line of every tlog-proof.
const proofHeader = "c2sp.org/tlog-proof@v1"

// maxProofHashes bounds an inclusion proof: no tree of at most 2⁶³ records
// is deeper than 63.
const maxProofHashes = 63

// ErrMalformedProof reports text that is not a c2sp.org/tlog-proof@v1 proof.
var ErrMalformedProof = errors.New("tlog: malformed proof")

// FormatProof encodes p as c2sp.org/tlog-proof@v1 text.
func FormatProof(p Proof) []byte {
	var b bytes.Buffer
	b.WriteString(proofHeader + "\n")
	if len(p.Extra) > 0 {
		b.WriteString("extra " + base64.StdEncoding.EncodeToString(p.Extra) + "\n")
	}
	b.WriteString("index " + strconv.FormatInt(p.Index, 10) + "\n")
	for _, h := range p.Hashes {
		b.WriteString(base64.StdEncoding.EncodeToString(h[:]) + "\n")
	}
	b.WriteString("\n")
	b.Write(p.Checkpoint.Note)
	return b.Bytes()
}

// ParseProof parses c2sp.org/tlog-proof@v1 text and verifies its
// checkpoint (see ParseCheckpoint). It does not check the inclusion
// itself, which needs the record: call VerifyInclusion(p.Checkpoint,
// p.Index, record, p.Hashes).
func ParseProof(text []byte, verifiers note.Verifiers) (Proof, error) {
	rest := string(text)
	next := func() (string, error) {
		line, after, ok := strings.Cut(rest, "\n")
		if !ok {
			return "", fmt.Errorf("%w: ends before the checkpoint", ErrMalformedProof)
		}
		rest = after
		return line, nil
	}
	line, err := next()
	if err != nil {
		return Proof{}, err
	}
	if line != proofHeader {
		return Proof{}, fmt.Errorf("%w: first line is %.40q, want %q", ErrMalformedProof, line, proofHeader)
	}
	var p Proof
	if line, err = next(); err != nil {
		return Proof{}, err
	}
	if b64, ok := strings.CutPrefix(line, "extra "); ok {
		p.Extra, err = base64.StdEncoding.Strict().DecodeString(b64)
		if err != nil || len(p.Extra) == 0 || strings.ContainsAny(b64, "\r\n") {
			return Proof{}, fmt.Errorf("%w: extra data is not non-empty standard base64", ErrMalformedProof)
		}
		if line, err = next(); err != nil {
			return Proof{}, err
		}
	}
	index, ok := strings.CutPrefix(line, "index ")
	if !ok {
		return Proof{}, fmt.Errorf("%w: line %.40q, want \"index N\"", ErrMalformedProof, line)
	}
	if p.Index, err = parseDecimal(index); err != nil {
		return Proof{}, fmt.Errorf("%w: index: %w", ErrMalformedProof, err)
	}
	for {
		if line, err = next(); err != nil {
			return Proof{}, err
		}
		if line == "" {
			break
		}
		if len(p.Hashes) == maxProofHashes {
			return Proof{}, fmt.Errorf("%w: more than %d hashes", ErrMalformedProof, maxProofHashes)
		}
		h, err := parseHash(line)
		if err != nil {
			return Proof{}, fmt.Errorf("%w: hash %d: %w", ErrMalformedProof, len(p.Hashes)+1, err)
		}
		p.Hashes = append(p.Hashes, h)
	}
	if p.Checkpoint, err = ParseCheckpoint([]byte(rest), verifiers); err != nil {
		return Proof{}, fmt.Errorf("tlog: proof's checkpoint: %w", err)
	}
	if p.Index >= p.Checkpoint.Size {
		return Proof{}, fmt.Errorf("%w: index %d is outside the checkpoint's tree of size %d", ErrMalformedProof, p.Index, p.Checkpoint.Size)
	}
	return p, nil
}
