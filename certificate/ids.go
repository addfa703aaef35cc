package certificate

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/lethe-privacy/lethe/translog"
)

// A RecordRef names one deleted record: the store ("postgres" or
// "pinecone"), the table or namespace, and the record id.
type RecordRef struct {
	Store string
	Table string
	ID    string
}

func (r RecordRef) String() string { return r.Store + "/" + r.Table + "/" + r.ID }

// leaf is store || 0x00 || table || 0x00 || id. Store and table hold no NUL,
// so no two refs share a leaf.
func (r RecordRef) leaf() ([]byte, error) {
	if r.Store == "" || r.Table == "" || strings.ContainsRune(r.Store, 0) || strings.ContainsRune(r.Table, 0) {
		return nil, fmt.Errorf("certificate: record %q: store and table must be set and contain no NUL byte", r.String())
	}
	return []byte(r.Store + "\x00" + r.Table + "\x00" + r.ID), nil
}

// IDProof proves that one record is among those an IDsDigest commits to:
// its index among the sorted leaves and the RFC 6962 audit path (hex).
type IDProof struct {
	Index int64    `json:"index"`
	Path  []string `json:"path"`
}

// IDsRoot commits to the deleted records: the RFC 6962 Merkle root over
// their leaves sorted bytewise. Duplicates are an error, because a count
// that includes them would overstate what was deleted.
func IDsRoot(refs []RecordRef) (IDsDigest, error) {
	t, err := buildIDTree(refs)
	if err != nil {
		return IDsDigest{}, err
	}
	root, err := tlog.TreeHash(int64(len(t.leaves)), t)
	if err != nil {
		return IDsDigest{}, fmt.Errorf("certificate: deleted ids root: %w", err)
	}
	return IDsDigest{Count: int64(len(t.leaves)), Root: hex.EncodeToString(root[:])}, nil
}

// ProveID proves that ref is among refs, for checking against IDsRoot(refs)
// with CheckID, without disclosing the other records.
func ProveID(refs []RecordRef, ref RecordRef) (IDProof, error) {
	t, err := buildIDTree(refs)
	if err != nil {
		return IDProof{}, err
	}
	leaf, err := ref.leaf()
	if err != nil {
		return IDProof{}, err
	}
	i, found := slices.BinarySearchFunc(t.leaves, leaf, bytes.Compare)
	if !found {
		return IDProof{}, fmt.Errorf("certificate: record %q is not among the %d deleted records", ref.String(), len(t.leaves))
	}
	proof, err := tlog.ProveRecord(int64(len(t.leaves)), int64(i), t)
	if err != nil {
		return IDProof{}, fmt.Errorf("certificate: proving record %q: %w", ref.String(), err)
	}
	p := IDProof{Index: int64(i), Path: make([]string, len(proof))}
	for j, h := range proof {
		p.Path[j] = hex.EncodeToString(h[:])
	}
	return p, nil
}

// CheckID verifies that proof shows ref among the records digest commits to.
func CheckID(digest IDsDigest, ref RecordRef, proof IDProof) error {
	leaf, err := ref.leaf()
	if err != nil {
		return err
	}
	root, err := parseHexHash(digest.Root)
	if err != nil {
		return fmt.Errorf("certificate: deleted_ids.root: %w", err)
	}
	path := make(tlog.RecordProof, len(proof.Path))
	for i, s := range proof.Path {
		if path[i], err = parseHexHash(s); err != nil {
			return fmt.Errorf("certificate: id proof path[%d]: %w", i, err)
		}
	}
	if err := translog.CheckInclusion(path, digest.Count, root, proof.Index, tlog.RecordHash(leaf)); err != nil {
		return fmt.Errorf("certificate: record %q is not proven among the %d deleted records: %w", ref.String(), digest.Count, err)
	}
	return nil
}

func parseHexHash(s string) (tlog.Hash, error) {
	if !isHex256(s) {
		return tlog.Hash{}, fmt.Errorf("%q is not 64 lowercase hex digits", s)
	}
	var h tlog.Hash
	hex.Decode(h[:], []byte(s))
	return h, nil
}

// idTree is an in-memory RFC 6962 tree: the sorted leaves and the stored
// hashes tlog computes for them (tlog.StoredHashes), read back through
// tlog.HashReader.
type idTree struct {
	leaves [][]byte
	hashes []tlog.Hash
}

func buildIDTree(refs []RecordRef) (*idTree, error) {
	t := &idTree{leaves: make([][]byte, len(refs))}
	for i, r := range refs {
		var err error
		if t.leaves[i], err = r.leaf(); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(t.leaves, bytes.Compare)
	for i, l := range t.leaves {
		if i > 0 && bytes.Equal(t.leaves[i-1], l) {
			return nil, fmt.Errorf("certificate: record %q is listed twice; give each deleted record once", strings.ReplaceAll(string(l), "\x00", "/"))
		}
		hs, err := tlog.StoredHashes(int64(i), l, t)
		if err != nil {
			return nil, fmt.Errorf("certificate: hashing deleted ids: %w", err)
		}
		t.hashes = append(t.hashes, hs...)
	}
	return t, nil
}

// ReadHashes implements tlog.HashReader.
func (t *idTree) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(t.hashes)) {
			return nil, errors.New("stored hash index out of range")
		}
		out[i] = t.hashes[x]
	}
	return out, nil
}
