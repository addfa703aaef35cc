package translog

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/mod/sumdb/note"
	merkle "golang.org/x/mod/sumdb/tlog"
)

// Log is a transparency log kept in a Storage and signed with one key.
// It is safe for concurrent use; several Logs (in several processes) may
// share one Storage.
type Log struct {
	storage Storage
	signer  note.Signer
	origin  string
	// signing serialises Sign within the process; across processes,
	// Storage.PutCheckpoint's one-per-size rule decides.
	signing sync.Mutex
}

// New returns the log kept in s, whose checkpoints name origin and are
// signed by signer. The signer's key name must be the origin, so that
// clients know which key speaks for the log (c2sp.org/tlog-checkpoint).
func New(s Storage, signer note.Signer, origin string) (*Log, error) {
	if origin == "" || strings.ContainsAny(origin, "\n") {
		return nil, fmt.Errorf("tlog: origin %q must be one non-empty line", origin)
	}
	if signer.Name() != origin {
		return nil, fmt.Errorf("tlog: the signing key is named %q but the log's origin is %q; generate the key with the origin as its name", signer.Name(), origin)
	}
	return &Log{storage: s, signer: signer, origin: origin}, nil
}

// Origin returns the log's origin line.
func (l *Log) Origin() string { return l.origin }

// Append adds record to the log and returns its index.
func (l *Log) Append(ctx context.Context, record []byte) (int64, error) {
	n, err := l.storage.Append(ctx, record, func(n int64, r HashReader) ([]Hash, error) {
		return merkle.StoredHashes(n, record, r)
	})
	if err != nil {
		return 0, fmt.Errorf("tlog: append record: %w", err)
	}
	return n, nil
}

// Record returns record n.
func (l *Log) Record(ctx context.Context, n int64) ([]byte, error) {
	rec, err := l.storage.ReadRecord(ctx, n)
	if err != nil {
		return nil, fmt.Errorf("tlog: read record %d: %w", n, err)
	}
	return rec, nil
}

// Size returns the number of records in the log.
func (l *Log) Size(ctx context.Context) (int64, error) {
	n, err := l.storage.Size(ctx)
	if err != nil {
		return 0, fmt.Errorf("tlog: read log size: %w", err)
	}
	return n, nil
}

// Sign returns a signed checkpoint of the log at its current size. If one
// was signed for that size, it is returned as stored. Otherwise the new
// tree is first proved consistent with the latest stored checkpoint. Sign
// refuses (ErrTruncated, ErrForked, ErrOriginMismatch) rather than sign a
// checkpoint inconsistent with one it signed before, and refuses as well
// once the storage holds fewer records than a checkpoint it signed:
// storage that lost or altered records must be repaired by a person, not
// papered over.
func (l *Log) Sign(ctx context.Context) (Checkpoint, error) {
	l.signing.Lock()
	defer l.signing.Unlock()
	size, err := l.Size(ctx)
	if err != nil {
		return Checkpoint{}, err
	}
	root, err := merkle.TreeHash(size, l.hashReader(ctx))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("tlog: hash the tree of size %d: %w", size, err)
	}
	latest, err := l.latestStored(ctx)
	if err != nil {
		return Checkpoint{}, err
	}
	if latest != nil && latest.Size > size {
		return Checkpoint{}, fmt.Errorf("%w: the storage holds %d records but a checkpoint of size %d was signed: records were lost; restore them before signing", ErrTruncated, size, latest.Size)
	}
	stored, err := l.storage.Checkpoint(ctx, size)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("tlog: read checkpoint of size %d: %w", size, err)
	}
	if stored != nil {
		return l.matchStored(stored, size, root)
	}
	if latest != nil {
		if err := l.checkExtends(ctx, *latest, size, root); err != nil {
			return Checkpoint{}, err
		}
	}
	signed, err := note.Sign(&note.Note{Text: checkpointBody(l.origin, size, root)}, l.signer)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("tlog: sign checkpoint of size %d: %w", size, err)
	}
	if err := l.storage.PutCheckpoint(ctx, size, signed); err != nil {
		// Another process sharing the storage may have stored its
		// checkpoint for this size first; if it states the same tree,
		// it is the one to hand out.
		if stored, rerr := l.storage.Checkpoint(ctx, size); rerr == nil && stored != nil {
			return l.matchStored(stored, size, root)
		}
		return Checkpoint{}, fmt.Errorf("tlog: store checkpoint of size %d: %w", size, err)
	}
	return Checkpoint{Origin: l.origin, Size: size, Root: root, Note: signed}, nil
}

// latestStored returns the latest stored checkpoint, or nil if none is.
func (l *Log) latestStored(ctx context.Context) (*Checkpoint, error) {
	size, latest, err := l.storage.LatestCheckpoint(ctx)
	if err != nil {
		return nil, fmt.Errorf("tlog: read latest checkpoint: %w", err)
	}
	if latest == nil {
		return nil, nil
	}
	c, err := parseStoredCheckpoint(latest)
	if err != nil {
		return nil, fmt.Errorf("tlog: latest stored checkpoint: %w", err)
	}
	if c.Origin != l.origin {
		return nil, fmt.Errorf("%w: the latest stored checkpoint is of log %q, this is %q", ErrOriginMismatch, c.Origin, l.origin)
	}
	if c.Size != size {
		return nil, fmt.Errorf("%w: the checkpoint stored for size %d states size %d", ErrMalformedCheckpoint, size, c.Size)
	}
	return &c, nil
}

// matchStored returns the stored checkpoint of size if it states root.
func (l *Log) matchStored(stored []byte, size int64, root Hash) (Checkpoint, error) {
	c, err := parseStoredCheckpoint(stored)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("tlog: stored checkpoint of size %d: %w", size, err)
	}
	switch {
	case c.Origin != l.origin:
		return Checkpoint{}, fmt.Errorf("%w: the checkpoint stored for size %d is of log %q, this is %q", ErrOriginMismatch, size, c.Origin, l.origin)
	case c.Size != size:
		return Checkpoint{}, fmt.Errorf("%w: the checkpoint stored for size %d states size %d", ErrMalformedCheckpoint, size, c.Size)
	case c.Root != root:
		return Checkpoint{}, fmt.Errorf("%w: the checkpoint signed for size %d has root %s but the stored tree of that size hashes to %s: the storage was altered; refusing to sign", ErrForked, size, c.Root, root)
	}
	return c, nil
}

// checkExtends checks that the tree of size with hash root extends the
// tree of old, a checkpoint of at most size records.
func (l *Log) checkExtends(ctx context.Context, old Checkpoint, size int64, root Hash) error {
	if old.Size == 0 {
		return nil // the empty tree is a prefix of every tree
	}
	proof, err := merkle.ProveTree(size, old.Size, l.hashReader(ctx))
	if err != nil {
		return fmt.Errorf("tlog: prove size %d extends size %d: %w", size, old.Size, err)
	}
	if err := merkle.CheckTree(proof, size, root, old.Size, old.Root); err != nil {
		return fmt.Errorf("%w: the stored tree of size %d does not extend the checkpoint signed at size %d (%v): the storage was altered; refusing to sign", ErrForked, size, old.Size, err)
	}
	return nil
}

// InclusionProof returns the proof that record index is in the tree of
// size records.
func (l *Log) InclusionProof(ctx context.Context, index, size int64) (RecordProof, error) {
	if index < 0 || index >= size {
		return nil, fmt.Errorf("tlog: no record %d in a tree of size %d", index, size)
	}
	if err := l.checkSize(ctx, size); err != nil {
		return nil, err
	}
	p, err := merkle.ProveRecord(size, index, l.hashReader(ctx))
	if err != nil {
		return nil, fmt.Errorf("tlog: prove record %d in tree of size %d: %w", index, size, err)
	}
	return p, nil
}

// ConsistencyProof returns the proof that the tree of newSize records
// extends the tree of oldSize records. From the empty tree the proof is
// empty: it is a prefix of every tree.
func (l *Log) ConsistencyProof(ctx context.Context, oldSize, newSize int64) (TreeProof, error) {
	if oldSize < 0 || oldSize > newSize {
		return nil, fmt.Errorf("tlog: no consistency proof from size %d to size %d", oldSize, newSize)
	}
	if err := l.checkSize(ctx, newSize); err != nil {
		return nil, err
	}
	if oldSize == 0 {
		return TreeProof{}, nil
	}
	p, err := merkle.ProveTree(newSize, oldSize, l.hashReader(ctx))
	if err != nil {
		return nil, fmt.Errorf("tlog: prove size %d extends size %d: %w", newSize, oldSize, err)
	}
	return p, nil
}

// checkSize fails if the log has fewer than size records.
func (l *Log) checkSize(ctx context.Context, size int64) error {
	n, err := l.Size(ctx)
	if err != nil {
		return err
	}
	if size > n {
		return fmt.Errorf("tlog: tree size %d is beyond the log's %d records", size, n)
	}
	return nil
}

// hashReader reads the storage's hashes under ctx.
func (l *Log) hashReader(ctx context.Context) HashReader {
	return merkle.HashReaderFunc(func(indexes []int64) ([]Hash, error) {
		return l.storage.ReadHashes(ctx, indexes)
	})
}
