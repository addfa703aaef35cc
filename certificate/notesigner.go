package certificate

import "golang.org/x/mod/sumdb/note"

// NoteSigner returns the operator key as a signed-note signer named name,
// for a transparency log whose checkpoints name that origin.
func (s *Signer) NoteSigner(name string) note.Signer {
	return noteSigner{name: name, key: s.key}
}
