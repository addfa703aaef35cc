package config

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// TestRetention_DeclaredNoneOrUndeclared: postgres.retention and an
// index's retention read a period, none, or nothing (undeclared); a zero
// or unreadable period is refused with the fix.
func TestRetention_DeclaredNoneOrUndeclared(t *testing.T) {
	var c struct {
		Postgres struct {
			Retention CopyRetention `yaml:"retention"`
		} `yaml:"postgres"`
		Index PineconeIndex `yaml:"index"`
	}
	require.NoError(t, yaml.Unmarshal([]byte("postgres:\n  retention:\n    wal_archive: 30d\n    backups: none\nindex:\n  retention:\n    backups: 72h\n"), &c))
	require.Equal(t, Kept{Declared: true, Period: 30 * 24 * time.Hour}, c.Postgres.Retention.WALArchive)
	require.Equal(t, Kept{Declared: true, None: true}, c.Postgres.Retention.Backups)
	require.Equal(t, Kept{Declared: true, Period: 72 * time.Hour}, c.Index.Retention.Backups)

	var undeclared CopyRetention
	require.NoError(t, yaml.Unmarshal([]byte("backups: 35d\n"), &undeclared))
	require.False(t, undeclared.WALArchive.Declared)

	for value, want := range map[string]string{
		"0s":      "write none when no such copy is kept",
		"0d":      "write none when no such copy is kept",
		"forever": "or none when no such copy is kept",
		"-1h":     "write none when no such copy is kept",
	} {
		var r CopyRetention
		err := yaml.Unmarshal([]byte("backups: "+value+"\n"), &r)
		require.Error(t, err, value)
		require.True(t, strings.Contains(err.Error(), want), "%s: %v", value, err)
	}
}
