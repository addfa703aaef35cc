// Package jobopen runs, from a configuration, the commands that go once
// over the stores: lethe-proxy reconcile, sweep and replay. Each opens
// the ledger under the subject salt (forgetopen.OpenJob) and every wing's
// scanners, retainers or forget layers (proxyopen.FromWings), has the
// forget section's certifier sign and log its report once the stores are
// open (forgetopen.Job.Sign, so that a run that cannot read them writes
// nothing to the log), runs the engine package that does the work
// (engine/reconcile, engine/retention, engine/replay), and writes that
// package's output and report files.
//
// Each returns whether the stores are clean and an error; an error for
// which CouldNotRun is true kept the run from doing its work (the command
// exits 2 on it, as for a wrong flag), any other means the work was done
// in part or its result could not be written (exit 1).
//
// It is where a configuration becomes such a run: cmd/lethe-proxy parses
// flags and calls it; nothing below imports it.
package jobopen
