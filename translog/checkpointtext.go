package translog

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ParseCheckpointText reads the text of a checkpoint note (C2SP
// tlog-checkpoint): the origin, the tree size in canonical decimal and the
// standard base64 of the 32-byte root hash, one per line, then any
// non-empty extension lines, which are signed but not interpreted. The
// empty tree's root must be SHA-256(""). It checks no signature and
// leaves Note empty: the log (ParseCheckpoint) and certificate verifiers
// (certificate.OpenCheckpoint) share it so that a checkpoint reads alike
// everywhere.
func ParseCheckpointText(text string) (Checkpoint, error) {
	if !strings.HasSuffix(text, "\n") {
		return Checkpoint{}, errors.New("checkpoint body does not end in a newline")
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) < 3 || lines[0] == "" {
		return Checkpoint{}, errors.New("checkpoint body needs an origin, a size and a root hash line")
	}
	for _, ext := range lines[3:] {
		if ext == "" {
			return Checkpoint{}, errors.New("checkpoint body has a blank extension line")
		}
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	// Only the canonical decimal form: no sign, no leading zeros.
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != lines[1] {
		return Checkpoint{}, fmt.Errorf("checkpoint tree size %q is not a decimal number below 2^63", lines[1])
	}
	root, err := DecodeBase64(lines[2], 32)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint root hash %q: %w", lines[2], err)
	}
	c := Checkpoint{Origin: lines[0], Size: size, Root: Hash(root)}
	if size == 0 && c.Root != emptyRoot {
		return Checkpoint{}, errors.New("checkpoint of the empty tree with a root other than SHA-256(\"\")")
	}
	return c, nil
}

// strictBase64 refuses set bits after the last byte. It is made once
// because Strict returns a new copy of the encoding.
var strictBase64 = base64.StdEncoding.Strict()

// decodeBase64 decodes canonical standard base64 (re-encoding gives s back:
// no newlines, no stray bits) of exactly n bytes, or any length if n < 0.
func DecodeBase64(s string, n int) ([]byte, error) {
	b, err := strictBase64.DecodeString(s)
	// Go's base64 decoders skip \r and \n; without them, a string that
	// decodes strictly is exactly as long as the encoding of its bytes.
	if err != nil || len(s) != base64.StdEncoding.EncodedLen(len(b)) {
		return nil, errors.New("not canonical standard base64")
	}
	if n >= 0 && len(b) != n {
		return nil, fmt.Errorf("%d bytes, want %d", len(b), n)
	}
	return b, nil
}
