package offline

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
)

func TestWriteFile_ReplacesTheFileAndLeavesNoTemporary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "checkpoint.note")
	require.NoError(t, os.WriteFile(path, []byte("an older, longer checkpoint"), 0o600))
	require.NoError(t, WriteFile(path, []byte("newer")))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "newer", string(got))
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o644), info.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left beside it")
}

func TestGenerateKey_WritesAPrivateKeyAndItsTrustedKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "signing.pem")
	key, err := GenerateKey(path, "lethe.example.com/log")
	require.NoError(t, err)
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), info.Mode().Perm())
	pem, err := os.ReadFile(path)
	require.NoError(t, err)
	signer, err := certificate.LoadPrivateKey(pem)
	require.NoError(t, err)
	assert.Equal(t, signer.KeyID(), key.KeyID)
	set, err := certificate.ParseKeySet(key.TrustedKeys)
	require.NoError(t, err)
	assert.Equal(t, "lethe.example.com/log", set.LogOrigin())
}

func TestGenerateKey_NeverOverwritesAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "signing.pem")
	require.NoError(t, os.WriteFile(path, []byte("the key certificates are signed with"), 0o600))
	_, err := GenerateKey(path, "lethe.example.com/log")
	require.ErrorIs(t, err, fs.ErrExist)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "the key certificates are signed with", string(got))
}

func TestGenerateKey_ABadOriginIsAnOriginErrorAndWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "signing.pem")
	_, err := GenerateKey(path, "two\nlines")
	require.Error(t, err)
	assert.True(t, IsOriginError(err), "%v", err)
	assert.NoFileExists(t, path)
	assert.False(t, IsOriginError(fs.ErrExist))
}

func TestReadEvidence_ReadsAtMostOneByteOverTheLimit(t *testing.T) {
	big := strings.NewReader(strings.Repeat("x", certificate.MaxSize+100))
	got, err := ReadEvidence("-", big)
	require.NoError(t, err)
	assert.Len(t, got, certificate.MaxSize+1)
	_, err = ReadEvidence(filepath.Join(t.TempDir(), "absent.json"), nil)
	require.ErrorIs(t, err, fs.ErrNotExist)
}

func TestVerify_PrintsTheVerdictOfWhatIsNotACertificate(t *testing.T) {
	signer, err := certificate.GenerateKey(nil)
	require.NoError(t, err)
	keys, err := certificate.NewKeySet("lethe.example.com/log", signer.TrustedKey(time.Now()))
	require.NoError(t, err)
	var out bytes.Buffer
	assert.False(t, Verify([]byte(`{"not":"a certificate"}`), keys, certificate.ReportPolicy{Now: time.Now()}, &out))
	assert.Equal(t, "verdict: schema_mismatch\nreason: lethe_certificate is <nil>; this verifier reads version 1\n", out.String())
}

func TestReportLogIndex(t *testing.T) {
	i, ok := ReportLogIndex([]byte(`{"log":{"index":7}}`))
	assert.True(t, ok)
	assert.Equal(t, int64(7), i)
	_, ok = ReportLogIndex([]byte(`{"report":{}}`))
	assert.False(t, ok)
}

// A report is written where asked, or as <run id>.json in the current
// directory.
func TestWriteReport_DefaultsToTheRunID(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	file, err := WriteReport("", "sweep-1", []byte("signed"))
	require.NoError(t, err)
	assert.Equal(t, "sweep-1.json", file)
	got, err := os.ReadFile(filepath.Join(dir, "sweep-1.json"))
	require.NoError(t, err)
	assert.Equal(t, "signed", string(got))
	named := filepath.Join(dir, "r.json")
	file, err = WriteReport(named, "sweep-2", []byte("signed"))
	require.NoError(t, err)
	assert.Equal(t, named, file)
}

// TestVerify_PrintsThePhysicalLineBesideAValidVerdict: `lethe-proxy verify`
// prints a valid v2 certificate's physical line between the verdict and
// the reason, as node verify.mjs does, then a v3 certificate's horizon
// line, and a v1 certificate's output has neither.
func TestVerify_PrintsThePhysicalLineBesideAValidVerdict(t *testing.T) {
	vectors := filepath.Join("..", "testdata", "vectors")
	keysFile, err := os.ReadFile(filepath.Join(vectors, "keys.json"))
	require.NoError(t, err)
	keys, err := certificate.ParseKeySet(keysFile)
	require.NoError(t, err)
	now := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	for file, want := range map[string]string{
		"cert-v2-pages-scanned-still-hold-the-bytes.json": "verdict: valid\nphysical: postgres public.langchain_pg_embedding: 13 of 27 pages scanned still hold the bytes; pinecone docs/default: not scanned\nreason: ",
		"cert-valid.json": "verdict: valid\nreason: ",
		"cert-v3-horizon-of-one-store.json": "verdict: valid\nphysical: postgres public.langchain_pg_embedding: 13 of 27 pages scanned still hold the bytes; pinecone docs/default: not scanned\n" +
			"horizon: pinecone provider_purge: until 2026-08-30T12:00:00Z\nreason: ",
	} {
		data, err := os.ReadFile(filepath.Join(vectors, file))
		require.NoError(t, err)
		var out bytes.Buffer
		assert.True(t, Verify(data, keys, certificate.ReportPolicy{Now: now}, &out))
		assert.True(t, strings.HasPrefix(out.String(), want), "%s: %s", file, out.String())
	}
}

// TestVerifyWithAddenda_PrintsEachFoldVector: `lethe-proxy verify
// --addendum` prints, for every fold of the shared vectors, the
// certificate's verdict, the folded physical line, the horizon and replay
// lines, and a line per addendum with its verdict, as node verify.mjs
// does; it says valid only when the certificate is valid and every
// addendum was folded.
func TestVerifyWithAddenda_PrintsEachFoldVector(t *testing.T) {
	vectors := filepath.Join("..", "testdata", "vectors")
	var m struct {
		Folds []struct {
			Name, Certificate, Keys, Now, Verdict, Physical, Horizon, Replay string
			Addenda                                                          []struct{ File, Verdict string }
		}
	}
	manifest, err := os.ReadFile(filepath.Join(vectors, "manifest.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(manifest, &m))
	require.NotEmpty(t, m.Folds)
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(vectors, name))
		require.NoError(t, err)
		return b
	}
	for _, v := range m.Folds {
		t.Run(v.Name, func(t *testing.T) {
			keys, err := certificate.ParseKeySet(read(v.Keys))
			require.NoError(t, err)
			now, err := certificate.ParseTime(v.Now)
			require.NoError(t, err)
			var addenda []certificate.AddendumFile
			want := "verdict: " + v.Verdict + "\n"
			for _, line := range [][2]string{{"physical", v.Physical}, {"horizon", v.Horizon}, {"replay", v.Replay}} {
				if line[1] != "" {
					want += line[0] + ": " + line[1] + "\n"
				}
			}
			folded := v.Verdict == "valid"
			for _, a := range v.Addenda {
				addenda = append(addenda, certificate.AddendumFile{Name: a.File, Data: read(a.File)})
				if a.Verdict != "" {
					want += "addendum " + a.File + ": " + a.Verdict + ": "
				}
				folded = folded && a.Verdict == "valid"
			}
			var out bytes.Buffer
			assert.Equal(t, folded, VerifyWithAddenda(read(v.Certificate), addenda, keys, now, &out))
			got := out.String()
			// Each addendum's line ends in its reason: compare up to it.
			for _, a := range v.Addenda {
				if a.Verdict == "" {
					continue
				}
				prefix := "addendum " + a.File + ": " + a.Verdict + ": "
				i := strings.Index(got, prefix)
				require.GreaterOrEqual(t, i, 0, "%s\n%s", prefix, got)
				end := strings.Index(got[i:], "\n")
				got = got[:i+len(prefix)] + got[i+end+1:]
			}
			if !folded && v.Verdict != "valid" {
				want += "addenda: none folded: the certificate is not valid\n"
			}
			assert.True(t, strings.HasPrefix(got, want+"reason: "), "got\n%s\nwant\n%sreason: …", out.String(), want)
		})
	}
}
