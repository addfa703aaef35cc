package demo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseDatabaseURL_PasswordLeavesTheStore: the store URL written to
// the configuration has no password (the proxy gets it through
// PGPASSWORD), the upstream is the URL's host:port, sslmode maps onto
// upstream_tls, and a Unix socket or a keyword/value string is refused
// with the form to use.
func TestParseDatabaseURL_PasswordLeavesTheStore(t *testing.T) {
	got, err := parseDatabaseURL("postgres://app:s3cret@db.example:6543/mem?sslmode=require")
	require.NoError(t, err)
	assert.Equal(t, "postgres://app@db.example:6543/mem?sslmode=require", got.Store)
	assert.Equal(t, "s3cret", got.Password)
	assert.Equal(t, "db.example:6543", got.Upstream)
	assert.Equal(t, "require", got.UpstreamTLS)
	assert.Equal(t, "app", got.User)
	assert.Equal(t, "mem", got.Database)

	_, err = parseDatabaseURL("host=db user=app")
	assert.ErrorContains(t, err, "postgres://user:password@host:port/database")
	_, err = parseDatabaseURL("postgres://app@/mem?host=/var/run/postgresql")
	assert.ErrorContains(t, err, "needs a TCP host")
}

// TestWALDecision_OffSaysWhyAndTheFix: the follower runs only with
// wal_level logical and a role that may replicate; otherwise the reason
// names the setting to change.
func TestWALDecision_OffSaysWhyAndTheFix(t *testing.T) {
	on, _ := walDecision("logical", true)
	assert.True(t, on)
	on, why := walDecision("replica", true)
	assert.False(t, on)
	assert.Contains(t, why, "wal_level = logical")
	on, why = walDecision("logical", false)
	assert.False(t, on)
	assert.Contains(t, why, "REPLICATION")
}
