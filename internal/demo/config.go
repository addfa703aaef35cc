package demo

import (
	"fmt"
	"net"
	"os"
	"strconv"
)

// Sample data the demo writes: the index, the namespace and the
// environment variable holding the emulator's API key.
const (
	IndexName  = "demo"
	Namespace  = "memories"
	apiKeyEnv  = "LETHE_DEMO_PINECONE_API_KEY"
	demoAPIKey = "lethe-demo-key"
)

// addresses are where one run of the demo listens.
type addresses struct {
	Emulator string // the index host, http://host:port
	Pinecone string // the proxy's Pinecone listener, host:port
	Admin    string // the admin API, host:port
	Postgres string // the proxy's PostgreSQL listener, host:port; "" without DATABASE_URL
}

// writeConfig writes the proxy's configuration for this run: the
// emulator as the only index host, a namespace rule on user_id, the
// SQLite ledger and forget with the state's key and tokens; with pg, also
// the PostgreSQL relay in front of that server and a rule on the demo's
// table. It is rewritten at every start, since the emulator (in memory)
// listens on a new port each time; every path in it is absolute.
func (s State) writeConfig(at addresses, pg *pgTarget) error {
	q := strconv.Quote
	yaml := fmt.Sprintf(`# Written by lethe-proxy demo at each start; edits are lost.
pinecone:
  listen: %s
  verify_deadline: 10s
  indexes:
    - name: %s
      host: %s
      api_key_env: %s
      namespaces:
        - namespace: "*"
          subjects: [user_id]
          description: the demo's sample memories
capture:
  ledger:
    sqlite: %s
%sforget:
  signing_key: %s
  trusted_keys: %s
  log_origin: %s
  admin:
    listen: %s
    tokens_file: %s
shutdown_timeout: 5s
`, q(at.Pinecone), q(IndexName), q(at.Emulator), apiKeyEnv, q(s.Path(fileLedger)), postgresConfig(pg), q(s.Path(fileSigningKey)),
		q(s.Path(fileTrustedKeys)), q(LogOrigin), q(at.Admin), q(s.Path(fileTokens)))
	if pg != nil {
		yaml += fmt.Sprintf("postgres:\n  listen: %s\n  upstream: %s\n  upstream_tls: %s\n", q(at.Postgres), q(pg.Upstream), pg.UpstreamTLS)
	}
	if err := os.WriteFile(s.Path(fileConfig), []byte(yaml), 0o600); err != nil {
		return fmt.Errorf("writing the demo's configuration: %w", err)
	}
	return nil
}

// postgresConfig is the rest of the capture section with DATABASE_URL:
// the store, the WAL follower on its own slot (or off), the demo's table.
func postgresConfig(pg *pgTarget) string {
	if pg == nil {
		return ""
	}
	q := strconv.Quote
	wal := "on"
	if !pg.WAL {
		wal = "off"
	}
	return fmt.Sprintf(`  store: %s
  wal: %s
  wal_slot: %s
  tables:
    - table: %s
      id: id
      subjects: [user_id]
      description: the demo's sample memories
`, q(pg.Store), wal, Slot, Table)
}

// freeAddr is a loopback address with a port free at the time of the
// call, for a listener the proxy opens next.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port on 127.0.0.1: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
