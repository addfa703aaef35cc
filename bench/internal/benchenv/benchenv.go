// Package benchenv is what the bench programs share around their
// measurements: log lines and fatal errors under the program's name, and the
// settings their scripts (bench/*.sh) pass in the environment.
package benchenv

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Prog is a bench program's name, the prefix of its log lines, as the
// script that runs it prefixes its own.
type Prog string

// Logf writes one line to stderr: "[prog HH:MM:SS] message".
func (p Prog) Logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "[%s %s] %s\n", p, time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

// Fatalf writes "[prog] ERROR: message" to stderr and exits with status 1.
func (p Prog) Fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "[%s] ERROR: %s\n", p, fmt.Sprintf(format, a...))
	os.Exit(1)
}

// EnvInt is the non-negative integer in environment variable name, def
// when it is unset or empty; anything else is fatal.
func (p Prog) EnvInt(name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		p.Fatalf("%s must be a non-negative integer (got %q)", name, v)
	}
	return n
}
