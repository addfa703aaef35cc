package adminclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/certificate/offline"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/translog"
)

// Checkpoint is the transparency log's latest signed checkpoint, the
// signed note as the server sent it.
func (c *Client) Checkpoint(ctx context.Context) ([]byte, error) {
	return c.call(ctx, http.MethodGet, "/v1/log/checkpoint", nil)
}

// ConsistencyProof asks the server to prove that the log of size newSize
// extends that of oldSize. The proof is not trusted:
// translog.VerifyConsistency checks it against both signed roots.
func (c *Client) ConsistencyProof(ctx context.Context, oldSize, newSize int64) (translog.TreeProof, error) {
	body, err := c.call(ctx, http.MethodGet, fmt.Sprintf("/v1/log/consistency?old=%d&new=%d", oldSize, newSize), nil)
	if err != nil {
		return nil, err
	}
	var p engine.ConsistencyProof
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("the server's consistency proof is not JSON: %w", err)
	}
	if p.OldSize != oldSize || p.NewSize != newSize {
		return nil, fmt.Errorf("asked for a proof from size %d to %d, the server sent one from %d to %d", oldSize, newSize, p.OldSize, p.NewSize)
	}
	proof := make(translog.TreeProof, len(p.Hashes))
	for i, h := range p.Hashes {
		if len(h) != len(proof[i]) {
			return nil, fmt.Errorf("hash %d of the server's consistency proof is %d bytes, want %d", i+1, len(h), len(proof[i]))
		}
		copy(proof[i][:], h)
	}
	return proof, nil
}

// VerifyLog checks the server's latest checkpoint: its signature against
// keys and, when since names a checkpoint saved earlier, that the log only
// grew since then (RFC 6962 consistency proof). It says what it verified
// on stdout and returns the verified checkpoint, which the next run may
// start from. Its errors say what was found and, for a truncated or
// rewritten log, quote the server's checkpoint to keep as evidence.
func (c *Client) VerifyLog(ctx context.Context, keys certificate.KeySet, since string, stdout io.Writer) (translog.Checkpoint, error) {
	var older *translog.Checkpoint
	if since != "" {
		note, err := os.ReadFile(since)
		if err != nil {
			return translog.Checkpoint{}, err
		}
		cp, err := certificate.OpenCheckpoint(note, keys)
		if err != nil {
			return translog.Checkpoint{}, fmt.Errorf("the checkpoint in %s: %w", since, err)
		}
		older = &cp
	}
	note, err := c.Checkpoint(ctx)
	if err != nil {
		return translog.Checkpoint{}, err
	}
	newer, err := certificate.OpenCheckpoint(note, keys)
	if err != nil {
		return translog.Checkpoint{}, fmt.Errorf("the server's checkpoint: %w\n%s", err, note)
	}
	if older == nil {
		fmt.Fprintf(stdout, "checkpoint verified: %s, size %d (signed by a trusted key; no earlier checkpoint to compare: pass --since FILE next time)\n", newer.Origin, newer.Size)
		return newer, nil
	}
	var proof translog.TreeProof
	if newer.Size > older.Size {
		if proof, err = c.ConsistencyProof(ctx, older.Size, newer.Size); err != nil {
			return translog.Checkpoint{}, err
		}
	}
	switch err := translog.VerifyConsistency(*older, newer, proof); {
	case errors.Is(err, translog.ErrTruncated):
		return translog.Checkpoint{}, fmt.Errorf("TRUNCATED: the log now has %d records but the checkpoint in %s, signed by the same operator, has %d: records were removed from the log.\n"+
			"Keep %s and the server's checkpoint below as evidence.\n%s", newer.Size, since, older.Size, since, note)
	case errors.Is(err, translog.ErrForked):
		return translog.Checkpoint{}, fmt.Errorf("FORKED: the log of size %d does not extend the checkpoint of size %d in %s: the log's history was rewritten (%v).\n"+
			"Keep %s and the server's checkpoint below as evidence.\n%s", newer.Size, older.Size, since, err, since, note)
	case errors.Is(err, translog.ErrOriginMismatch):
		return translog.Checkpoint{}, fmt.Errorf("the checkpoint in %s is of log %q but the server's is of log %q: check that --admin points at the right server", since, older.Origin, newer.Origin)
	case err != nil:
		return translog.Checkpoint{}, err
	}
	fmt.Fprintf(stdout, "consistent: size %d → %d\n", older.Size, newer.Size)
	return newer, nil
}

// VerifyLogFiles is lethe-proxy log verify: VerifyLog against the trusted
// keys in keysFile, from the checkpoint saved in since (none when empty),
// and, when save names a file, the verified checkpoint written there
// (atomically: the next run trusts it), which it says on stderr.
func (c *Client) VerifyLogFiles(ctx context.Context, keysFile, since, save string, stdout, stderr io.Writer) error {
	keys, err := certificate.ReadKeySet(keysFile)
	if err != nil {
		return err
	}
	newer, err := c.VerifyLog(ctx, keys, since, stdout)
	if err != nil {
		return err
	}
	if save != "" {
		if err := offline.WriteFile(save, newer.Note); err != nil {
			return fmt.Errorf("saving the checkpoint: %w", err)
		}
		fmt.Fprintf(stderr, "saved the checkpoint of size %d to %s\n", newer.Size, save)
	}
	return nil
}
