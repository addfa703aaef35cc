package config

import (
	"io"
	"log/slog"
)

// NewLogger is the logger log.level and log.format ask for, writing to w:
// JSON lines for format json, slog's text otherwise.
func (l Log) NewLogger(w io.Writer) *slog.Logger {
	var level slog.Level
	level.UnmarshalText([]byte(l.Level)) // validated at load
	opts := &slog.HandlerOptions{Level: level}
	if l.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
