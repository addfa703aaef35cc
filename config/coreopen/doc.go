// Package coreopen builds the capture core a serving proxy runs on, from
// its configuration: the ledger (opened through ledgeropen, the subject
// salt recorded), the tombstones read from it, and capture.New with the
// compiled rules and the write-policy keys (capture.mode, capture.fail_open,
// forget.forgotten, forget.late_writes). Every wing records through the
// core; forget and the WAL follower read and write the same ledger with
// the same hasher.
//
// It is where config, capture and ledger meet for serving: it imports
// them, and none of them imports it.
package coreopen
