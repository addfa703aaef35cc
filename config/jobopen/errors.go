package jobopen

import "errors"

// couldNotRun marks an error that kept a run from doing its work: a
// configuration, salt, key or store it cannot use, or the engine's refusal
// to start. Its text is the wrapped error's.
type couldNotRun struct{ err error }

func (e couldNotRun) Error() string { return e.err.Error() }
func (e couldNotRun) Unwrap() error { return e.err }

// CouldNotRun reports whether err kept the run from doing its work.
func CouldNotRun(err error) bool {
	var c couldNotRun
	return errors.As(err, &c)
}
