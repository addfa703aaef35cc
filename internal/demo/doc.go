// Package demo is lethe-proxy demo: the whole product on an embedded
// default, with nothing to install or configure. In a state directory it
// reuses it keeps a signing key, a subject salt, an admin token and an
// SQLite ledger; at each start it runs the Pinecone emulator in-process as
// the index host, writes the proxy's configuration for it, starts the
// proxy (through the caller's Start, the same start serve makes), writes
// sample memories about two people through the proxy with go-pinecone,
// and either prints how to forget one of them (and serves until the
// context ends) or, with Run, forgets alice itself and returns whether
// her certificate is valid.
//
// The demo sets LETHE_SUBJECT_SALT_FILE and the emulator's API key
// variable in its own process's environment: the proxy it starts reads
// them from there, as serve does.
package demo
