package demo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// row is one sample row of the demo's table.
type row struct {
	ID, Person, Content string
	Embedding           []float32 // 8 dimensions: vector(8)
}

var rows = []row{
	{"pg-alice-1", "alice", "asked to be called Ali", []float32{0.9, 0.1, 0.2, 0, 0, 0, 0.1, 0.3}},
	{"pg-alice-2", "alice", "lives near Ghent", []float32{0.7, 0.2, 0.1, 0.1, 0, 0, 0.2, 0.1}},
	{"pg-bob-1", "bob", "prefers email to phone calls", []float32{0.1, 0.9, 0.3, 0, 0.1, 0, 0, 0.2}},
	{"pg-bob-2", "bob", "has a standing order every Friday", []float32{0.2, 0.8, 0.4, 0.1, 0, 0.1, 0, 0}},
}

// proxyConnString is DATABASE_URL's user, password and database at the
// proxy's PostgreSQL listener.
func proxyConnString(pg pgTarget, proxyAddr string) (string, error) {
	host, port, err := net.SplitHostPort(proxyAddr)
	if err != nil {
		return "", err
	}
	cfg := []string{"host=" + host, "port=" + port, "sslmode=disable", "user=" + quoteKV(pg.User), "dbname=" + quoteKV(pg.Database)}
	if pg.Password != "" {
		cfg = append(cfg, "password="+quoteKV(pg.Password))
	}
	return strings.Join(cfg, " "), nil
}

func quoteKV(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// writeRows upserts person's sample rows into the demo's table through
// the proxy with pgx, as an application would.
func writeRows(ctx context.Context, pg pgTarget, proxyAddr, person string) error {
	dsn, err := proxyConnString(pg, proxyAddr)
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connecting pgx to the proxy at %s: %w", proxyAddr, err)
	}
	defer conn.Close(ctx)
	for _, r := range rows {
		if r.Person != person {
			continue
		}
		_, err := conn.Exec(ctx, `INSERT INTO `+Table+` (id, user_id, content, embedding)
VALUES ($1, $2, $3, $4::vector)
ON CONFLICT (id) DO UPDATE SET user_id = excluded.user_id, content = excluded.content, embedding = excluded.embedding`,
			r.ID, r.Person, r.Content, vectorText(r.Embedding))
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "LT003" {
			return errForgotten{person}
		}
		if err != nil {
			return fmt.Errorf("writing the sample rows through the proxy: %w", err)
		}
	}
	return nil
}

// vectorText is pgvector's text form, [0.1,0.2,...].
func vectorText(values []float32) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = strconv.FormatFloat(float64(v), 'f', -1, 32)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
