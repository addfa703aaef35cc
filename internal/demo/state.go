package demo

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/certificate/offline"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcwing"
)

// LogOrigin is the demo's transparency log origin (forget.log_origin).
const LogOrigin = "lethe.demo/forget-log"

// The files of a state directory. Clean removes these and nothing else.
const (
	fileSigningKey  = "signing.pem"
	fileTrustedKeys = "trusted-keys.json"
	fileSalt        = "salt"
	fileToken       = "admin-token"
	fileTokens      = "tokens.json"
	fileConfig      = "config.yaml"
	fileLedger      = "ledger.db"
	fileCertificate = "certificate-alice.json"
)

// stateFiles are every file the demo may create in its directory,
// including the ledger's companions.
var stateFiles = []string{
	fileSigningKey, fileTrustedKeys, fileSalt, fileToken, fileTokens, fileConfig,
	fileLedger, fileLedger + "-pending", fileLedger + "-wal", fileLedger + "-shm",
	fileLedger + "-pending-wal", fileLedger + "-pending-shm", fileCertificate,
}

// State is a demo's state directory: what is made once and reused.
type State struct {
	Dir string
}

// DefaultDir is the state directory without --dir: lethe-demo under
// $XDG_STATE_HOME when that is set, else ./lethe-demo.
func DefaultDir() string {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "lethe-demo")
	}
	return "lethe-demo"
}

// Path is the absolute path of a file of the state directory.
func (s State) Path(name string) string { return filepath.Join(s.Dir, name) }

// Prepare creates the directory (0700) and, once, the signing key with
// its trusted keys file, the subject salt and an operator admin token
// with its tokens file; an existing file is kept, so that the ledger, the
// transparency log and the certificates of earlier runs stay valid.
func (s State) Prepare() error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("creating the demo's state directory: %w; choose another with --dir", err)
	}
	if !exists(s.Path(fileSigningKey)) {
		key, err := offline.GenerateKey(s.Path(fileSigningKey), LogOrigin)
		if err != nil {
			return fmt.Errorf("demo signing key: %w", err)
		}
		if err := os.WriteFile(s.Path(fileTrustedKeys), key.TrustedKeys, 0o644); err != nil {
			return fmt.Errorf("demo trusted keys: %w", err)
		}
	}
	if !exists(s.Path(fileSalt)) {
		salt := make([]byte, 32)
		if _, err := rand.Read(salt); err != nil {
			return err
		}
		if err := os.WriteFile(s.Path(fileSalt), salt, 0o600); err != nil {
			return fmt.Errorf("demo subject salt: %w", err)
		}
	}
	if !exists(s.Path(fileToken)) {
		secret, entry, err := admin.NewToken("demo", admin.RoleOperator)
		if err != nil {
			return err
		}
		if err := admin.AppendToken(s.Path(fileTokens), entry); err != nil {
			return fmt.Errorf("demo tokens file: %w", err)
		}
		if err := os.WriteFile(s.Path(fileToken), []byte(secret+"\n"), 0o600); err != nil {
			return fmt.Errorf("demo admin token: %w", err)
		}
	}
	return nil
}

// Token is the demo's operator admin token.
func (s State) Token() (string, error) {
	b, err := os.ReadFile(s.Path(fileToken))
	if err != nil {
		return "", fmt.Errorf("reading the demo's admin token: %w; remove the state directory with demo --clean and start again", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Clean removes the files the demo creates, then the directory if
// nothing else is in it; it never removes a file it did not create.
// It returns the files left in the directory.
func (s State) Clean() (left []string, err error) {
	for _, name := range stateFiles {
		if err := os.Remove(s.Path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("removing %s: %w", s.Path(name), err)
		}
	}
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if len(left) == 0 {
		if err := os.Remove(s.Dir); err != nil {
			return nil, err
		}
	}
	return left, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// forgetEmulatorMarks resets what the ledger saw of the demo's index
// before a run starts a new emulator: in memory, it is a new, empty index
// at every run, on another port, which restore detection would otherwise
// take for a restored one and hold the demo's writes until a replay.
func (s *State) forgetEmulatorMarks(ctx context.Context) error {
	if _, err := os.Stat(s.Path(fileLedger)); errors.Is(err, fs.ErrNotExist) {
		return nil // a first run: nothing seen yet
	}
	l, err := ledger.OpenSQLite(s.Path(fileLedger), ledger.Options{})
	if err != nil {
		return fmt.Errorf("opening the demo's ledger %s: %w", s.Path(fileLedger), err)
	}
	defer l.Close()
	return pcwing.ForgetMarks(ctx, l, IndexName, []string{Namespace})
}
