package demo

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// CleanAll is lethe-proxy demo --clean: what the demo recorded making on
// the PostgreSQL server (CleanPostgres, with databaseURL), then its files
// in the state directory (Clean), each step said on out.
func (s State) CleanAll(ctx context.Context, databaseURL string, out io.Writer) error {
	dropped, err := s.CleanPostgres(ctx, databaseURL)
	if err != nil {
		return err
	}
	if len(dropped) > 0 {
		fmt.Fprintf(out, "Dropped on the PostgreSQL server: %s\n", strings.Join(dropped, "; "))
	}
	left, err := s.Clean()
	if err != nil {
		return err
	}
	if len(left) > 0 {
		fmt.Fprintf(out, "Removed the demo's files; %s also holds files the demo did not make, left alone: %s\n", s.Dir, strings.Join(left, ", "))
		return nil
	}
	fmt.Fprintf(out, "Removed %s\n", s.Dir)
	return nil
}
