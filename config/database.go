package config

import (
	"github.com/jackc/pgx/v5/pgconn"
)

// resolveDatabase settles capture.database, the database the rules belong
// to: as given, else the one capture.store connects to. A server hosts
// several databases, and a table name means nothing without one; the
// store must be that database too, since forget, recovery and the writers
// check look there. Reading the connection string is local: pgconn applies
// PGDATABASE, PGUSER and service files as it will when the store is opened.
func (c *Config) resolveDatabase() error {
	cp := &c.Capture
	if len(cp.Tables) == 0 {
		return nil // a pure relay: no rules to confine
	}
	storeDB := ""
	if cp.Store != "" {
		pc, err := pgconn.ParseConfig(cp.Store)
		if err != nil {
			return c.at("capture.store", "%v (write e.g. store: \"host=db.internal dbname=app user=lethe\")", err)
		}
		// PostgreSQL connects to the database named after the user when
		// none is given.
		if storeDB = pc.Database; storeDB == "" {
			storeDB = pc.User
		}
	}
	switch {
	case cp.Database == "" && storeDB == "":
		return c.at("capture", "database is missing: name the database capture.tables are in "+
			"(write e.g. database: app), or set capture.store, whose database is the default")
	case cp.Database == "":
		cp.Database = storeDB
	case storeDB != "" && storeDB != cp.Database:
		return c.at("capture.database", "%q is not the database capture.store connects to (%q): "+
			"forget and recovery use capture.store, so both must name the database capture.tables are in", cp.Database, storeDB)
	}
	return nil
}
