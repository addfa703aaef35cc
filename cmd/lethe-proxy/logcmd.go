package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/translog"
)

const logUsage = `Usage:
  lethe-proxy log checkpoint [client flags]
      print the transparency log's latest signed checkpoint
  lethe-proxy log verify --keys KEYS.json [--since FILE] [--save FILE] [client flags]
      check the latest checkpoint's signature against the trusted keys and,
      with --since, that the log only grew since the checkpoint in FILE
      (RFC 6962 consistency proof); --save writes the verified checkpoint
      to FILE, so that the next run starts from it

Client flags:
  --admin URL        admin API (default $LETHE_ADMIN_URL or ` + defaultAdminURL + `)
  --token-file FILE  file holding the bearer token (default $LETHE_ADMIN_TOKEN)
`

// logCmd reads and checks the transparency log through the admin API.
func logCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "checkpoint" && args[0] != "verify") {
		fmt.Fprint(stderr, logUsage)
		return 2
	}
	sub := args[0]
	fs := flag.NewFlagSet("log "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, logUsage) }
	client := adminClientFlags(fs)
	var keysFile, since, save *string
	if sub == "verify" {
		keysFile = fs.String("keys", "", "trusted keys file (JSON, as published by the operator)")
		since = fs.String("since", "", "a checkpoint saved earlier (by --save)")
		save = fs.String("save", "", "write the verified latest checkpoint to FILE")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lethe-proxy log %s: unexpected argument %q\n\n%s", sub, fs.Arg(0), logUsage)
		return 2
	}
	if sub == "verify" && *keysFile == "" {
		fmt.Fprint(stderr, "lethe-proxy log verify: --keys KEYS.json is required: the operator's published trusted keys\n")
		return 2
	}
	c, err := client()
	if err != nil {
		fmt.Fprintf(stderr, "lethe-proxy log %s: %v\n", sub, err)
		return 2
	}
	ctx := context.Background()
	if sub == "checkpoint" {
		note, err := c.call(ctx, http.MethodGet, "/v1/log/checkpoint", nil)
		if err != nil {
			fmt.Fprintf(stderr, "lethe-proxy log checkpoint: %v\n", err)
			return 1
		}
		stdout.Write(note)
		return 0
	}
	return logVerify(ctx, c, *keysFile, *since, *save, stdout, stderr)
}

// logVerify is `log verify`: signatures first, then consistency.
func logVerify(ctx context.Context, c *adminClient, keysFile, since, save string, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "lethe-proxy log verify: "+format+"\n", a...)
		return 1
	}
	keyData, err := os.ReadFile(keysFile)
	if err != nil {
		return fail("%v", err)
	}
	keys, err := certificate.ParseKeySet(keyData)
	if err != nil {
		return fail("%s: %v", keysFile, err)
	}
	var older *translog.Checkpoint
	if since != "" {
		note, err := os.ReadFile(since)
		if err != nil {
			return fail("%v", err)
		}
		cp, err := certificate.OpenCheckpoint(note, keys)
		if err != nil {
			return fail("the checkpoint in %s: %v", since, err)
		}
		older = &cp
	}
	note, err := c.call(ctx, http.MethodGet, "/v1/log/checkpoint", nil)
	if err != nil {
		return fail("%v", err)
	}
	newer, err := certificate.OpenCheckpoint(note, keys)
	if err != nil {
		return fail("the server's checkpoint: %v\n%s", err, note)
	}

	if older == nil {
		fmt.Fprintf(stdout, "checkpoint verified: %s, size %d (signed by a trusted key; no earlier checkpoint to compare: pass --since FILE next time)\n", newer.Origin, newer.Size)
	} else {
		var proof translog.TreeProof
		if newer.Size > older.Size {
			if proof, err = fetchConsistency(ctx, c, older.Size, newer.Size); err != nil {
				return fail("%v", err)
			}
		}
		switch err := translog.VerifyConsistency(*older, newer, proof); {
		case errors.Is(err, translog.ErrTruncated):
			return fail("TRUNCATED: the log now has %d records but the checkpoint in %s, signed by the same operator, has %d: records were removed from the log.\n"+
				"Keep %s and the server's checkpoint below as evidence.\n%s", newer.Size, since, older.Size, since, note)
		case errors.Is(err, translog.ErrForked):
			return fail("FORKED: the log of size %d does not extend the checkpoint of size %d in %s: the log's history was rewritten (%v).\n"+
				"Keep %s and the server's checkpoint below as evidence.\n%s", newer.Size, older.Size, since, err, since, note)
		case errors.Is(err, translog.ErrOriginMismatch):
			return fail("the checkpoint in %s is of log %q but the server's is of log %q: check that --admin points at the right server", since, older.Origin, newer.Origin)
		case err != nil:
			return fail("%v", err)
		}
		fmt.Fprintf(stdout, "consistent: size %d → %d\n", older.Size, newer.Size)
	}
	if save != "" {
		if err := writeFileAtomic(save, newer.Note); err != nil {
			return fail("saving the checkpoint: %v", err)
		}
		fmt.Fprintf(stderr, "saved the checkpoint of size %d to %s\n", newer.Size, save)
	}
	return 0
}

// fetchConsistency asks the server to prove that the log of size newSize
// extends that of oldSize. The proof is not trusted: VerifyConsistency
// checks it against both signed roots.
func fetchConsistency(ctx context.Context, c *adminClient, oldSize, newSize int64) (translog.TreeProof, error) {
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

// writeFileAtomic replaces path with data, never leaving a partial file:
// a saved checkpoint is what the next run trusts, a signed report what an
// auditor is handed.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // fails harmlessly after the rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
