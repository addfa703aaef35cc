// Package proxyopen builds a serving proxy from its configuration and runs
// it: the capture core (coreopen), the wing of every store the
// configuration names (pgwing, pcwing), forget and the admin API
// (forgetopen). Start opens them in order, Serve runs them until a signal
// or a failed listener and shuts them down within shutdown_timeout, and
// Close stops what Start started. Wings without a core are the stores the
// commands that only read them (check, reconcile, sweep, replay) open.
//
// It is where a configuration becomes running wings: cmd/lethe-proxy
// parses flags and calls it; nothing below imports it. A third store is
// one more constructor call in Wings.
package proxyopen
