package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// knownBug skips a test whose failure err is a reported, not yet fixed bug
// in non-test code. Once the bug is fixed err is nil and the test guards
// against regressions like any other.
func knownBug(t *testing.T, bug string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("BUG (%s): %v", bug, err)
	}
}

func TestParse_MinimalConfigGetsDefaults(t *testing.T) {
	for _, src := range []string{
		"postgres:\n  upstream: db.internal:5432\n",
		"postgres: {upstream: 'db.internal:5432'}\n",
		"# comment\npostgres:\n  upstream: db.internal:5432\n  tls:\nlog:\n",
	} {
		t.Run(src, func(t *testing.T) {
			cfg, err := Parse("cfg.yaml", []byte(src))
			require.NoError(t, err)
			p := cfg.Postgres
			assert.Equal(t, "db.internal:5432", p.Upstream)
			assert.Equal(t, "127.0.0.1:6432", p.Listen)
			assert.Equal(t, "disable", p.UpstreamTLS)
			assert.Empty(t, p.UpstreamCAFile)
			assert.Empty(t, p.UpstreamServerName)
			assert.Equal(t, 10*time.Second, p.ConnectTimeout.D())
			assert.Equal(t, ClientTLS{}, p.TLS)
			assert.Equal(t, ByteSize(64<<20), p.MaxMessageSize)
			assert.Equal(t, Log{Level: "info", Format: "text"}, cfg.Log)
			assert.Equal(t, 30*time.Second, cfg.ShutdownTimeout.D())
		})
	}
}

func TestLoad_ReadsEveryKey(t *testing.T) {
	cfg, err := Load("testdata/full.yaml")
	require.NoError(t, err)
	assert.Equal(t, Postgres{
		Listen:             "0.0.0.0:7432",
		Upstream:           "db.internal:5433",
		UpstreamTLS:        "verify-full",
		UpstreamCAFile:     "testdata/ca.pem", // relative to the config file's directory
		UpstreamServerName: "db.example.com",
		ConnectTimeout:     Duration(3 * time.Second),
		TLS:                ClientTLS{CertFile: "testdata/cert.pem", KeyFile: "testdata/key.pem", Required: true},
		MaxMessageSize:     512 << 10,
	}, cfg.Postgres)
	assert.Equal(t, Log{Level: "debug", Format: "json"}, cfg.Log)
	assert.Equal(t, 2*time.Minute, cfg.ShutdownTimeout.D())
}

func TestParse_ErrorsNameFileLineAndFix(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string // substrings of the error, in any order
	}{
		{
			name: "unknown nested key",
			src:  "postgres:\n  upstream: db:5432\n  upstrem_tls: require\n",
			want: []string{"cfg.yaml:3:", "upstrem_tls", "config.example.yaml"},
		},
		{
			name: "unknown top-level key",
			src:  "postgres:\n  upstream: db:5432\nlogging:\n  level: debug\n",
			want: []string{"cfg.yaml:3:", "logging"},
		},
		{
			name: "bad upstream_tls",
			src:  "postgres:\n  upstream: db:5432\n  upstream_tls: prefer\n",
			want: []string{"cfg.yaml:3: postgres.upstream_tls:", `"prefer"`, "disable, require, verify-full"},
		},
		{
			name: "bad connect_timeout",
			src:  "postgres:\n  upstream: db:5432\n  connect_timeout: 10 seconds\n",
			want: []string{"cfg.yaml:3:", `"10 seconds" is not a duration`, "10s"},
		},
		{
			name: "connect_timeout without unit",
			src:  "postgres:\n  upstream: db:5432\n  connect_timeout: 10\n",
			want: []string{"cfg.yaml:3:", `"10" is not a duration`},
		},
		{
			name: "zero connect_timeout",
			src:  "postgres:\n  upstream: db:5432\n  connect_timeout: 0s\n",
			want: []string{"cfg.yaml:3: postgres.connect_timeout:", "must be positive"},
		},
		{
			name: "bad shutdown_timeout",
			src:  "postgres:\n  upstream: db:5432\nshutdown_timeout: forever\n",
			want: []string{"cfg.yaml:3:", `"forever" is not a duration`},
		},
		{
			name: "negative shutdown_timeout",
			src:  "postgres:\n  upstream: db:5432\nshutdown_timeout: -5s\n",
			want: []string{"cfg.yaml:3: shutdown_timeout:", "must not be negative"},
		},
		{
			name: "bad size",
			src:  "postgres:\n  upstream: db:5432\n  max_message_size: 64 megabytes\n",
			want: []string{"cfg.yaml:3:", `"64 megabytes" is not a size`, "64MiB"},
		},
		{
			name: "fractional size",
			src:  "postgres:\n  upstream: db:5432\n  max_message_size: 1.5MiB\n",
			want: []string{"cfg.yaml:3:", `"1.5MiB" is not a size`},
		},
		{
			name: "negative size",
			src:  "postgres:\n  upstream: db:5432\n  max_message_size: -1\n",
			want: []string{"cfg.yaml:3:", `"-1" is not a size`},
		},
		{
			name: "size below the minimum",
			src:  "postgres:\n  upstream: db:5432\n  max_message_size: 1023\n",
			want: []string{"cfg.yaml:3: postgres.max_message_size:", "1023 bytes is outside"},
		},
		{
			name: "size above PostgreSQL's limit",
			src:  "postgres:\n  upstream: db:5432\n  max_message_size: 2GiB\n",
			want: []string{"cfg.yaml:3: postgres.max_message_size:", "2147483648 bytes is outside"},
		},
		{
			name: "cert without key",
			src:  "postgres:\n  upstream: db:5432\n  tls:\n    cert_file: testdata/cert.pem\n",
			want: []string{"cfg.yaml:3: postgres.tls:", "set both cert_file and key_file"},
		},
		{
			name: "key without cert",
			src:  "postgres:\n  upstream: db:5432\n  tls:\n    key_file: testdata/key.pem\n",
			want: []string{"cfg.yaml:3: postgres.tls:", "set both cert_file and key_file"},
		},
		{
			name: "unreadable cert",
			src:  "postgres:\n  upstream: db:5432\n  tls:\n    cert_file: testdata/missing.pem\n    key_file: testdata/key.pem\n",
			want: []string{"cfg.yaml:4: postgres.tls.cert_file:", `cannot read "testdata/missing.pem"`},
		},
		{
			name: "unreadable CA file",
			src:  "postgres:\n  upstream: db:5432\n  upstream_tls: verify-full\n  upstream_ca_file: testdata/nope.pem\n",
			want: []string{"cfg.yaml:4: postgres.upstream_ca_file:", `cannot read "testdata/nope.pem"`},
		},
		{
			name: "TLS required without cert",
			src:  "postgres:\n  upstream: db:5432\n  tls:\n    required: true\n",
			want: []string{"cfg.yaml:4: postgres.tls.required:", "no cert_file/key_file"},
		},
		{
			name: "empty file",
			src:  "",
			want: []string{"cfg.yaml: postgres:", "upstream is missing", "upstream: 127.0.0.1:5432"},
		},
		{
			name: "only comments",
			src:  "# nothing here\n",
			want: []string{"cfg.yaml: postgres:", "upstream is missing"},
		},
		{
			name: "postgres section without upstream",
			src:  "log:\n  level: info\npostgres:\n  listen: 127.0.0.1:6432\n",
			want: []string{"cfg.yaml:3: postgres:", "upstream is missing"},
		},
		{
			name: "upstream without port",
			src:  "postgres:\n  upstream: db.internal\n",
			want: []string{"cfg.yaml:2: postgres.upstream:", `"db.internal" is not host:port`},
		},
		{
			name: "listen without port",
			src:  "postgres:\n  upstream: db:5432\n  listen: localhost\n",
			want: []string{"cfg.yaml:3: postgres.listen:", `"localhost" is not host:port`},
		},
		{
			name: "bad log level",
			src:  "postgres:\n  upstream: db:5432\nlog:\n  level: verbose\n",
			want: []string{"cfg.yaml:4: log.level:", `"verbose" is not one of debug, info, warn, error`},
		},
		{
			name: "bad log format",
			src:  "postgres:\n  upstream: db:5432\nlog:\n  format: xml\n",
			want: []string{"cfg.yaml:4: log.format:", `"xml" is not one of text, json`},
		},
		{
			name: "YAML syntax error",
			src:  "postgres:\n  upstream: db:5432\n    listen: x\n",
			want: []string{"cfg.yaml:3:"},
		},
		{
			name: "section given a scalar",
			src:  "postgres: db:5432\n",
			want: []string{"cfg.yaml:1:"},
		},
		{
			name: "several problems reported together",
			src:  "postgres:\n  upstream: db:5432\n  upstream_tls: on\nlog:\n  level: loud\n",
			want: []string{"cfg.yaml:3: postgres.upstream_tls:", "cfg.yaml:5: log.level:"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse("cfg.yaml", []byte(tc.src))
			require.Error(t, err)
			assert.Nil(t, cfg)
			assert.True(t, strings.HasPrefix(err.Error(), "lethe: invalid config"), "error: %v", err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestLoad_ErrorsNameTheFile(t *testing.T) {
	_, err := Load("testdata/unknown_key.yaml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "testdata/unknown_key.yaml:4:")
	assert.Contains(t, err.Error(), "upstream_tsl")

	_, err = Load("testdata/does-not-exist.yaml")
	require.Error(t, err)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), "testdata/does-not-exist.yaml")
}

func TestLoad_MinimalFile(t *testing.T) {
	cfg, err := Load("testdata/minimal.yaml")
	require.NoError(t, err)
	want := Defaults()
	want.Postgres.Upstream = "db.internal:5432"
	assertSameSettings(t, want, *cfg)
}

// assertSameSettings compares the exported settings of two configs.
func assertSameSettings(t *testing.T, want, got Config) {
	t.Helper()
	assert.Equal(t, want.Postgres, got.Postgres)
	assert.Equal(t, want.Log, got.Log)
	assert.Equal(t, want.ShutdownTimeout, got.ShutdownTimeout)
}

func TestByteSize_ParsesUnits(t *testing.T) {
	cases := []struct {
		in   string
		want ByteSize
	}{
		{"65536", 65536},
		{"0", 0},
		{"10B", 10},
		{"512KiB", 512 << 10},
		{"100kB", 100 << 10},
		{"2KB", 2 << 10},
		{"64MiB", 64 << 20},
		{"64 MiB", 64 << 20},
		{"3MB", 3 << 20},
		{"1GiB", 1 << 30},
		{"1GB", 1 << 30},
		{"'16MiB'", 16 << 20},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			var v struct{ Size ByteSize }
			require.NoError(t, yaml.Unmarshal([]byte("size: "+tc.in), &v))
			assert.Equal(t, tc.want, v.Size)
		})
	}
}

func TestByteSize_RejectsNonSizes(t *testing.T) {
	cases := []struct {
		in       string
		knownBug string
	}{
		{in: `""`},
		{in: "MiB"},
		{in: "1.5MiB"},
		{in: "-1KiB"},
		{in: "1TiB"},
		{in: "64mb"},
		{in: "0x10"},
		{in: "12 apples"},
		{in: "99999999999999999999"},
		{in: "18014398509483008KiB", knownBug: "v*scale overflows int64 without a check; this wraps to 1048576 (1 MiB)"},
		{in: "9223372036854775807GiB", knownBug: "v*scale overflows int64 without a check"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			var v struct{ Size ByteSize }
			err := yaml.Unmarshal([]byte("size: "+tc.in), &v)
			if tc.knownBug != "" && err == nil {
				knownBug(t, tc.knownBug, fmt.Errorf("accepted as %d bytes", v.Size))
			}
			require.Error(t, err, "parsed as %d", v.Size)
			assert.Contains(t, err.Error(), "is not a size")
		})
	}
}

func TestParse_MaxMessageSizeBounds(t *testing.T) {
	cases := []struct {
		in string
		ok bool
	}{
		{in: "1KiB", ok: true},
		{in: "1024", ok: true},
		{in: "64MiB", ok: true},
		{in: "512KiB", ok: true},
		{in: "1073741823", ok: true}, // PostgreSQL's own ceiling, 1 GiB - 1
		{in: "1023", ok: false},
		{in: "1073741825", ok: false},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			cfg, err := Parse("cfg.yaml", []byte("postgres:\n  upstream: db:5432\n  max_message_size: "+tc.in+"\n"))
			if !tc.ok {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "cfg.yaml:3: postgres.max_message_size:")
				return
			}
			require.NoError(t, err)
			assert.Positive(t, cfg.Postgres.MaxMessageSize)
		})
	}
}

func TestParse_MaxMessageSizeErrorStatesTheTrueRange(t *testing.T) {
	// 1GiB (and 1GB, the same size) must either be accepted or be refused
	// with a range that does not include it.
	for _, in := range []string{"1GiB", "1GB", "1073741824"} {
		t.Run(in, func(t *testing.T) {
			_, err := Parse("cfg.yaml", []byte("postgres:\n  upstream: db:5432\n  max_message_size: "+in+"\n"))
			if err != nil && strings.Contains(err.Error(), "1KiB..1GiB") {
				knownBug(t, "validate rejects 1<<30 (ceiling 1<<30 - 1) with a message saying the valid range is 1KiB..1GiB", err)
			}
			if err != nil {
				assert.NotContains(t, err.Error(), "..1GiB")
			}
		})
	}
}

func TestLoad_ExampleConfigParses(t *testing.T) {
	const path = "../config.example.yaml"
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		t.Skip("config.example.yaml is not written yet")
	}
	cfg, err := Load(path)
	require.NoError(t, err)
	assert.NotEmpty(t, cfg.Postgres.Upstream)

	// The example says the values it shows are the defaults.
	want := Defaults()
	want.Postgres.Upstream = cfg.Postgres.Upstream
	assertSameSettings(t, want, *cfg)
}

func TestParse_ForgetSectionIsValidated(t *testing.T) {
	dir := t.TempDir()
	key, tokens := dir+"/key.pem", dir+"/tokens.json"
	require.NoError(t, os.WriteFile(key, []byte("k"), 0o600))
	require.NoError(t, os.WriteFile(tokens, []byte("{}"), 0o600))
	base := "postgres: {upstream: 'db:5432'}\n"
	tables := "capture:\n  store: host=db\n  tables: [{table: public.docs, id: id, subjects: [user_id], vacuum: true}]\n"
	for name, tc := range map[string]struct {
		src  string
		want string // "" = valid
	}{
		"disabled without a key": {base, ""},
		"complete":               {base + tables + "forget: {signing_key: " + key + ", admin: {tokens_file: " + tokens + "}}\n", ""},
		"no tables":              {base + "forget: {signing_key: " + key + ", admin: {tokens_file: " + tokens + "}}\n", "add capture.tables"},
		"no tokens":              {base + tables + "forget: {signing_key: " + key + "}\n", "lethe-proxy admin-token"},
		"missing key file":       {base + tables + "forget: {signing_key: /nonexistent/k.pem, admin: {tokens_file: " + tokens + "}}\n", "cannot read"},
		"bad forgotten":          {base + tables + "forget: {signing_key: " + key + ", forgotten: maybe, admin: {tokens_file: " + tokens + "}}\n", "refuse, flag"},
		"bad late_writes":        {base + tables + "forget: {signing_key: " + key + ", late_writes: keep, admin: {tokens_file: " + tokens + "}}\n", `forget.late_writes: "keep" is not one of delete, flag`},
		"bad origin":             {base + tables + "forget: {signing_key: " + key + ", log_origin: 'a b', admin: {tokens_file: " + tokens + "}}\n", "without spaces"},
		"bad admin listen":       {base + tables + "forget: {signing_key: " + key + ", admin: {listen: nope, tokens_file: " + tokens + "}}\n", "host:port"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := Parse(dir+"/cfg.yaml", []byte(tc.src))
			if tc.want == "" {
				require.NoError(t, err)
				assert.Equal(t, 720*time.Hour, cfg.Forget.Deadline.D())
				assert.Equal(t, ForgottenRefuse, cfg.Forget.Forgotten)
				assert.Equal(t, LateWritesDelete, cfg.Forget.LateWrites)
				assert.Equal(t, "127.0.0.1:7070", cfg.Forget.Admin.Listen)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestParse_LeaseAndRefreshIntervals(t *testing.T) {
	base := "postgres: {upstream: 'db:5432'}\n"
	cfg, err := Parse("cfg.yaml", []byte(base))
	require.NoError(t, err)
	assert.Equal(t, time.Minute, cfg.Capture.Ledger.Lease.D())
	assert.Equal(t, time.Minute, cfg.Capture.RecoveryInterval.D())
	assert.Equal(t, 10*time.Second, cfg.Forget.TombstoneRefresh.D())
	assert.Equal(t, 100_000, cfg.Capture.MaxStatementsInFlight)

	cfg, err = Parse("cfg.yaml", []byte(base+"capture: {recovery_interval: 30s, ledger: {lease: 2m}}\nforget: {tombstone_refresh: 1s}\n"))
	require.NoError(t, err)
	assert.Equal(t, 2*time.Minute, cfg.Capture.Ledger.Lease.D())
	assert.Equal(t, 30*time.Second, cfg.Capture.RecoveryInterval.D())
	assert.Equal(t, time.Second, cfg.Forget.TombstoneRefresh.D())

	for src, want := range map[string]string{
		"capture: {ledger: {lease: 1s}}\n":          "capture.ledger.lease: must be at least 3s",
		"capture: {recovery_interval: 0s}\n":        "capture.recovery_interval: must be positive",
		"capture: {recovery_interval: never}\n":     `"never" is not a duration`,
		"capture: {max_statements_in_flight: 10}\n": "capture.max_statements_in_flight: must be at least 1000",
	} {
		_, err := Parse("cfg.yaml", []byte(base+src))
		require.ErrorContains(t, err, want, src)
	}
}

func TestParse_TheWALFollowerIsOnByDefaultAndNeedsAStore(t *testing.T) {
	base := "postgres: {upstream: 'db:5432'}\ncapture:\n  tables: [{table: public.notes, id: id, subjects: [user_id]}]\n"
	cfg, err := Parse("cfg.yaml", []byte(base+"  store: host=db dbname=app\n"))
	require.NoError(t, err)
	assert.True(t, cfg.Capture.Follows())
	assert.Equal(t, "lethe_app", cfg.Capture.WALSlot, "named after the database: slots are server-wide")
	cfg, err = Parse("cfg.yaml", []byte(base+"  database: app\n  wal: off\n"))
	require.NoError(t, err)
	assert.False(t, cfg.Capture.Follows())
	cfg, err = Parse("cfg.yaml", []byte("postgres: {upstream: 'db:5432'}\n"))
	require.NoError(t, err)
	assert.False(t, cfg.Capture.Follows(), "nothing to follow without tables")

	for src, want := range map[string]string{
		"  database: app\n":                                  "capture.wal: the WAL follower needs capture.store",
		"  store: host=db dbname=app\n  wal: maybe\n":        `capture.wal: "maybe" is not one of on, off`,
		"  store: host=db dbname=app\n  wal_slot: Lethe-1\n": `capture.wal_slot: "Lethe-1" cannot name a replication slot`,
	} {
		_, err := Parse("cfg.yaml", []byte(base+src))
		require.ErrorContains(t, err, want, src)
	}
}

func TestParse_TheWALSlotIsNamedAfterTheDatabaseUnlessSet(t *testing.T) {
	base := "postgres: {upstream: 'db:5432'}\ncapture:\n  tables: [{table: public.notes, id: id, subjects: [user_id]}]\n"
	for src, want := range map[string]string{
		"  store: host=db dbname=app\n":                      "lethe_app",
		"  store: host=db dbname=billing\n":                  "lethe_billing",
		"  store: host=db user=svc\n":                        "lethe_svc", // PostgreSQL's default database: the user's name
		"  store: host=db dbname=app\n  wal_slot: lethe\n":   "lethe",     // set: kept as it is
		"  store: host=db dbname=app\n  wal_slot: my_slot\n": "my_slot",
	} {
		cfg, err := Parse("cfg.yaml", []byte(base+src))
		require.NoError(t, err, src)
		assert.Equal(t, want, cfg.Capture.WALSlot, src)
	}
}

func TestParse_WALDecodingMemIsLeftToTheServerOrWithinPostgreSQLsBounds(t *testing.T) {
	base := "postgres: {upstream: 'db:5432'}\ncapture:\n  store: host=db dbname=app\n  tables: [{table: public.notes, id: id, subjects: [user_id]}]\n"
	cfg, err := Parse("cfg.yaml", []byte(base))
	require.NoError(t, err)
	assert.Zero(t, cfg.Capture.WALDecodingMem, "unset: the server's logical_decoding_work_mem")

	for in, want := range map[string]ByteSize{
		"64kB":         64 << 10,
		"256MB":        256 << 20,
		"1GB":          1 << 30,
		"1GiB":         1 << 30,
		"2097151MB":    2097151 << 20,     // the largest whole MB under PostgreSQL's ceiling
		"2147483647kB": (1<<31 - 1) << 10, // MAX_KILOBYTES on a 64-bit server
	} {
		cfg, err := Parse("cfg.yaml", []byte(base+"  wal_decoding_mem: "+in+"\n"))
		require.NoError(t, err, in)
		assert.Equal(t, want, cfg.Capture.WALDecodingMem, in)
	}

	for in, want := range map[string]string{
		"63kB":         "cfg.yaml:5: capture.wal_decoding_mem: 63kB is outside PostgreSQL's 64kB..2147483647kB",
		"2147483648kB": "capture.wal_decoding_mem: 2147483648kB is outside PostgreSQL's 64kB",
		"2048GB":       "capture.wal_decoding_mem: 2147483648kB is outside",
		"1000000":      "capture.wal_decoding_mem: 1000000 bytes is not a whole number of kB (write e.g. 256MB)",
		"lots":         `cfg.yaml:5: "lots" is not a size`,
		"-64MB":        `"-64MB" is not a size`,
	} {
		_, err := Parse("cfg.yaml", []byte(base+"  wal_decoding_mem: "+in+"\n"))
		require.ErrorContains(t, err, want, in)
	}
}

func TestParse_CaptureDatabaseDefaultsToTheStoresDatabase(t *testing.T) {
	t.Setenv("PGDATABASE", "")
	t.Setenv("PGUSER", "")
	t.Setenv("PGSERVICE", "")
	const base = "postgres: {upstream: 'db:5432'}\ncapture:\n  tables: [{table: public.notes, id: id, subjects: [user_id]}]\n"
	for name, tc := range map[string]struct{ src, want string }{
		"given":                   {base + "  database: notes_app\n  wal: off\n", "notes_app"},
		"given, same as store":    {base + "  database: app\n  store: host=db dbname=app\n", "app"},
		"store keywords":          {base + "  store: host=db dbname=app user=lethe\n", "app"},
		"store URL":               {base + "  store: postgres://lethe@db:5432/app?sslmode=disable\n", "app"},
		"store without a dbname":  {base + "  store: host=db user=lethe\n", "lethe"}, // PostgreSQL's default: the user name
		"mixed case from a store": {base + "  store: host=db dbname=AppDB\n", "AppDB"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := Parse("cfg.yaml", []byte(tc.src))
			require.NoError(t, err)
			assert.Equal(t, tc.want, cfg.Capture.Database)
		})
	}

	t.Run("PGDATABASE", func(t *testing.T) {
		t.Setenv("PGDATABASE", "from_env")
		cfg, err := Parse("cfg.yaml", []byte(base+"  store: host=db user=lethe\n"))
		require.NoError(t, err)
		assert.Equal(t, "from_env", cfg.Capture.Database)
	})

	t.Run("no tables: a pure relay needs none", func(t *testing.T) {
		cfg, err := Parse("cfg.yaml", []byte("postgres: {upstream: 'db:5432'}\n"))
		require.NoError(t, err)
		assert.Empty(t, cfg.Capture.Database)
	})
}

func TestParse_CaptureDatabaseErrorsNameTheKeyToSet(t *testing.T) {
	t.Setenv("PGDATABASE", "")
	const base = "postgres: {upstream: 'db:5432'}\ncapture:\n  tables: [{table: public.notes, id: id, subjects: [user_id]}]\n"
	for name, tc := range map[string]struct {
		src  string
		want []string
	}{
		"neither database nor store": {base, []string{
			"cfg.yaml:2: capture: database is missing", "write e.g. database: app", "capture.store",
		}},
		"database and store disagree": {base + "  store: host=db dbname=app\n  database: other\n", []string{
			`cfg.yaml:5: capture.database: "other" is not the database capture.store connects to ("app")`,
		}},
		"unreadable store": {base + "  store: 'host=db port=notaport'\n", []string{
			"cfg.yaml:4: capture.store:", "write e.g. store:",
		}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("cfg.yaml", []byte(tc.src))
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestParse_AdminTLSRequiredIsRefusedNamingTheCertificateFiles(t *testing.T) {
	for _, v := range []string{"true", "false", "yes"} {
		src := "postgres: {upstream: 'db:5432'}\nforget:\n  admin:\n    tls:\n      required: " + v + "\n"
		_, err := Parse("cfg.yaml", []byte(src))
		require.Error(t, err, v)
		assert.Contains(t, err.Error(), "cfg.yaml:5: forget.admin.tls.required: is not a setting", v)
		assert.Contains(t, err.Error(), "set cert_file and key_file to require TLS", v)
	}
}

func TestParse_CaptureWALOnInEverySpellingTurnsTheFollowerOn(t *testing.T) {
	for spelling, on := range map[string]bool{"on": true, "true": true, "off": false, "false": false} {
		src := "postgres: {upstream: 'db:5432'}\ncapture:\n  store: host=db\n  wal: " + spelling + "\n  tables: [{table: public.docs, id: id, subjects: [user_id]}]\n"
		cfg, err := Parse("cfg.yaml", []byte(src))
		require.NoError(t, err, spelling)
		assert.Equal(t, on, cfg.Capture.Follows(), spelling)
	}
}

func TestParse_OnRestoreIsRefuseOrWarn(t *testing.T) {
	for value, ok := range map[string]bool{"refuse": true, "warn": true, "ignore": false} {
		cfg, err := Parse("on_restore.yaml", []byte("postgres:\n  upstream: db.internal:5432\ncapture:\n  on_restore: "+value+"\n"))
		if ok {
			require.NoError(t, err, value)
			assert.Equal(t, OnRestore(value), cfg.Capture.OnRestore)
		} else {
			assert.ErrorContains(t, err, "capture.on_restore", value)
		}
	}
	assert.True(t, OnRestore("").Refuses(), "refuse is the default")
	assert.False(t, OnRestoreWarn.Refuses())
}
