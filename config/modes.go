package config

// The typed values of the config's mode keys. A file spells them as the
// constants' strings; validate refuses any other.

// CoverageMode is coverage.mode: what a table or namespace without a rule
// does.
type CoverageMode string

const (
	CoverageReport  CoverageMode = "report"  // log and count it (default)
	CoverageEnforce CoverageMode = "enforce" // refuse writes to it, and refuse a start that cannot check
)

// ForgottenWrites is forget.forgotten: what happens to a new write about a
// forgotten subject.
type ForgottenWrites string

const (
	ForgottenRefuse ForgottenWrites = "refuse" // refuse it (default, SQLSTATE LT003)
	ForgottenFlag   ForgottenWrites = "flag"   // forward it, log and count it
)

// LateWrites is forget.late_writes: what the WAL follower does with a
// committed row about a forgotten subject.
type LateWrites string

const (
	LateWritesDelete LateWrites = "delete" // delete and verify it (default)
	LateWritesFlag   LateWrites = "flag"   // log and count it
)

// Physical is a table rule's physical: what forget does about the bytes a
// delete leaves in the table's pages.
type Physical string

const (
	PhysicalOff    Physical = "off"    // nothing (default)
	PhysicalReport Physical = "report" // scan the pages after each forget and state what still holds the bytes
)

// Reports reports whether forget scans the table's pages.
func (p Physical) Reports() bool { return p == PhysicalReport }

// WAL is capture.wal: whether the WAL follower runs ("true" and "false"
// are YAML's spellings of on and off).
type WAL string

const (
	WALOn  WAL = "on"
	WALOff WAL = "off"
)

// On reports whether w turns the follower on.
func (w WAL) On() bool { return w == WALOn || w == "true" }

// Intents is capture.intents: which writes take a write-ahead intent.
type Intents string

const (
	IntentsAuto   Intents = "auto"   // not those the WAL follower streams in full (default)
	IntentsAlways Intents = "always" // every write
)
