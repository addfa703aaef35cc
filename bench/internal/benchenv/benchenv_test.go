package benchenv

import "testing"

func TestEnvIntReadsTheVariableAndFallsBackWhenUnsetOrEmpty(t *testing.T) {
	const p Prog = "test"
	t.Setenv("BENCHENV_TEST_N", "42")
	if got := p.EnvInt("BENCHENV_TEST_N", 7); got != 42 {
		t.Errorf("EnvInt(set) = %d, want 42", got)
	}
	t.Setenv("BENCHENV_TEST_N", "")
	if got := p.EnvInt("BENCHENV_TEST_N", 7); got != 7 {
		t.Errorf("EnvInt(empty) = %d, want the default 7", got)
	}
	if got := p.EnvInt("BENCHENV_TEST_UNSET_NAME", 3); got != 3 {
		t.Errorf("EnvInt(unset) = %d, want the default 3", got)
	}
}
