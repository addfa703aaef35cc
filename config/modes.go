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
	PhysicalVacuum Physical = "vacuum" // VACUUM (INDEX_CLEANUP ON), then scan as report
	PhysicalScrub  Physical = "scrub"  // vacuum, scan, rebuild or rewrite what still holds the bytes, scan again
)

// Reports reports whether forget scans the table's pages (every setting
// but off).
func (p Physical) Reports() bool { return p != "" && p != PhysicalOff }

// Vacuums reports whether forget vacuums the table before the scan
// (vacuum and scrub).
func (p Physical) Vacuums() bool { return p == PhysicalVacuum || p == PhysicalScrub }

// Scrubs reports whether forget rebuilds what still holds the bytes after
// the scan (scrub).
func (p Physical) Scrubs() bool { return p == PhysicalScrub }

// physicalName is the rule's physical setting as a file would spell it.
func (t TableRule) physicalName() Physical {
	if t.Physical == "" {
		return PhysicalOff
	}
	return t.Physical
}

// RewriteMaxPages is the rule's scrub_rewrite_max_pages, its default
// when unset.
func (t TableRule) RewriteMaxPages() int64 {
	if t.ScrubRewriteMaxPages == nil {
		return DefaultScrubRewriteMaxPages
	}
	return *t.ScrubRewriteMaxPages
}

// DefaultScrubRewriteMaxPages is scrub_rewrite_max_pages when a rule does
// not set it: a table whose relations (heap, TOAST, indexes) have at most
// this many pages (8 MiB) together is rewritten (VACUUM FULL) when its
// heap or TOAST pages still hold the bytes.
const DefaultScrubRewriteMaxPages = 1024

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
