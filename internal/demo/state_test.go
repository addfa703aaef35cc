package demo

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestState_PrepareKeepsWhatItMade: a second Prepare keeps the signing
// key, the salt and the token, so the ledger and certificates of earlier
// runs stay valid.
func TestState_PrepareKeepsWhatItMade(t *testing.T) {
	st := State{Dir: filepath.Join(t.TempDir(), "state")}
	require.NoError(t, st.Prepare())
	read := func() map[string]string {
		got := map[string]string{}
		for _, name := range []string{fileSigningKey, fileTrustedKeys, fileSalt, fileToken, fileTokens} {
			b, err := os.ReadFile(st.Path(name))
			require.NoError(t, err, name)
			got[name] = string(b)
		}
		return got
	}
	first := read()
	require.NoError(t, st.Prepare())
	assert.Equal(t, first, read())
	info, err := os.Stat(st.Path(fileSalt))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the salt is secret")
}

// TestState_CleanLeavesFilesItDidNotMake: Clean removes the demo's files
// and keeps the directory, and any file the demo did not make, when the
// user put something else there.
func TestState_CleanLeavesFilesItDidNotMake(t *testing.T) {
	st := State{Dir: filepath.Join(t.TempDir(), "state")}
	require.NoError(t, st.Prepare())
	require.NoError(t, os.WriteFile(st.Path("notes.txt"), []byte("mine"), 0o600))
	left, err := st.Clean()
	require.NoError(t, err)
	assert.Equal(t, []string{"notes.txt"}, left)
	assert.NoFileExists(t, st.Path(fileSigningKey))
	assert.FileExists(t, st.Path("notes.txt"))

	require.NoError(t, os.Remove(st.Path("notes.txt")))
	left, err = st.Clean()
	require.NoError(t, err)
	assert.Empty(t, left)
	assert.NoDirExists(t, st.Dir)
}

// TestState_CleanAllSaysWhatItRemovedAndWhatItLeft: without a PostgreSQL
// record it removes the files, names what it left, and names the
// directory once it is gone.
func TestState_CleanAllSaysWhatItRemovedAndWhatItLeft(t *testing.T) {
	st := State{Dir: filepath.Join(t.TempDir(), "state")}
	require.NoError(t, st.Prepare())
	require.NoError(t, os.WriteFile(st.Path("notes.txt"), []byte("mine"), 0o600))
	var out bytes.Buffer
	require.NoError(t, st.CleanAll(context.Background(), "", &out))
	assert.Equal(t, "Removed the demo's files; "+st.Dir+" also holds files the demo did not make, left alone: notes.txt\n", out.String())

	require.NoError(t, os.Remove(st.Path("notes.txt")))
	out.Reset()
	require.NoError(t, st.CleanAll(context.Background(), "", &out))
	assert.Equal(t, "Removed "+st.Dir+"\n", out.String())
	assert.NoDirExists(t, st.Dir)
}
