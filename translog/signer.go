package translog

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
)

// SignerChanged reports whether the latest stored checkpoint was signed by
// a key other than this log's (or none is stored yet): the moment to log
// that the key changed, so that readers of the log see every rotation.
func (l *Log) SignerChanged(ctx context.Context) (bool, error) {
	latest, err := l.latestStored(ctx)
	if err != nil || latest == nil {
		return latest == nil, err
	}
	return !signedWith(latest.Note, l.signer.Name(), l.signer.KeyHash()), nil
}

// signedWith reports whether a signed note carries a signature line by the
// key named name with key hash hash (c2sp.org/signed-note: "— name
// base64(key hash || signature)"). The signature itself is not checked:
// the note came from this log's own storage.
func signedWith(msg []byte, name string, hash uint32) bool {
	_, sigs, ok := bytes.Cut(msg, []byte("\n\n"))
	if !ok {
		return false
	}
	prefix := []byte("\u2014 " + name + " ")
	for _, line := range bytes.Split(sigs, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, prefix)
		if !ok {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(string(rest))
		if err == nil && len(raw) >= 4 && binary.BigEndian.Uint32(raw) == hash {
			return true
		}
	}
	return false
}
