package console

import (
	"testing"
	"time"
)

// TestSessions_EndAfterIdleTimeoutAndMaxAge: a session unused for more
// than idleTimeout is gone, and so is one used all along once
// maxSessionAge has passed since login.
func TestSessions_EndAfterIdleTimeoutAndMaxAge(t *testing.T) {
	now := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	s := newSessions(func() time.Time { return now })

	idle, _ := s.open("token")
	now = now.Add(idleTimeout - time.Second)
	if _, ok := s.get(idle); !ok {
		t.Fatal("a session used within the idle timeout ended")
	}
	now = now.Add(idleTimeout + time.Second)
	if _, ok := s.get(idle); ok {
		t.Fatal("a session idle for longer than the idle timeout is still open")
	}

	busy, _ := s.open("token")
	for end := now.Add(maxSessionAge); now.Before(end); now = now.Add(idleTimeout / 2) {
		if _, ok := s.get(busy); !ok {
			t.Fatalf("a session in use ended %v after login", maxSessionAge-end.Sub(now))
		}
	}
	now = now.Add(time.Second)
	if _, ok := s.get(busy); ok {
		t.Fatal("a session in use is still open after the maximum age")
	}
}

// TestSessions_AtTheBoundTheOldestEnds: opening a session when the table
// is full ends the oldest, not the new one.
func TestSessions_AtTheBoundTheOldestEnds(t *testing.T) {
	now := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	s := newSessions(func() time.Time { return now })
	first, _ := s.open("token")
	for range maxSessions - 1 {
		now = now.Add(time.Millisecond)
		s.open("token")
	}
	now = now.Add(time.Millisecond)
	last, _ := s.open("token")
	if _, ok := s.get(first); ok {
		t.Error("the oldest session survived a full table")
	}
	if _, ok := s.get(last); !ok {
		t.Error("the new session was not kept")
	}
	if n := len(s.byHash); n != maxSessions {
		t.Errorf("%d sessions kept, want %d", n, maxSessions)
	}
}
