package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

// tokensFile is Config.TokensFile: the credentials of the file's last
// usable content.
type tokensFile struct {
	path string
	log  *slog.Logger

	mu      sync.Mutex
	data    []byte // the content creds were read from; nil: those of Config.Tokens
	creds   []credential
	problem string // what was last logged of an unusable file, so it is logged once
}

// current reads the file and returns its credentials: those read last
// when it is unchanged or unusable. The file is small and holds hashes
// only, so it is read at each request rather than watched: a change takes
// effect at the next request, with no signal, timer or restart.
func (f *tokensFile) current() []credential {
	data, err := os.ReadFile(f.path)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil && f.data != nil && bytes.Equal(data, f.data) {
		return f.creds
	}
	var creds []credential
	if err == nil {
		var tokens []Token
		if tokens, err = ParseTokens(data); err == nil {
			creds, err = credentials(tokens)
		}
	}
	if err != nil {
		if msg := err.Error(); msg != f.problem {
			f.problem = msg
			f.log.Error("admin: the tokens file cannot be used; the tokens read before stay in force until it is fixed",
				"file", f.path, "tokens", len(f.creds), "error", msg)
		}
		return f.creds
	}
	if f.data != nil || f.problem != "" {
		f.log.Info("admin: tokens file read again", "file", f.path, "tokens", len(creds))
	}
	f.data, f.creds, f.problem = data, creds, ""
	return creds
}

// AppendToken adds entry to the tokens file at path, creating the file
// (mode 0600) when it is missing. It refuses an entry whose name or token
// the file already holds, and a file it cannot read as a tokens file. The
// file is replaced in one step (a new file renamed over it, with the old
// one's mode), so a proxy reading it never sees it half-written.
func AppendToken(path string, entry Token) error {
	var tokens []Token
	mode := fs.FileMode(0o600)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("admin: reading the tokens file: %w", err)
	default:
		if len(bytes.TrimSpace(data)) > 0 {
			if tokens, err = decodeTokens(data); err != nil {
				return fmt.Errorf("%w (%s); fix the file, then add the token again", err, path)
			}
		}
		if info, err := os.Stat(path); err == nil {
			mode = info.Mode().Perm()
		}
	}
	tokens = append(tokens, entry)
	if err := checkTokens(tokens); err != nil {
		return fmt.Errorf("%w (%s)", err, path)
	}
	out, err := json.MarshalIndent(tokensFileForm{Tokens: tokens}, "", "  ")
	if err != nil {
		return err
	}
	return replaceFile(path, append(out, '\n'), mode)
}

// replaceFile writes data to a new file beside path, with mode, and
// renames it over path.
func replaceFile(path string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("admin: writing the tokens file: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("admin: writing the tokens file: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("admin: writing the tokens file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("admin: writing the tokens file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("admin: writing the tokens file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("admin: writing the tokens file: %w", err)
	}
	return nil
}
