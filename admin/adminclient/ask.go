package adminclient

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// AskOn returns a question asker that writes to out and reads the answer,
// a line, from in: y or yes (any case) is yes, anything else no.
func AskOn(in io.Reader, out io.Writer) func(question string) (bool, error) {
	answers := bufio.NewReader(in)
	return func(question string) (bool, error) {
		fmt.Fprintf(out, "%s [y/N] ", question)
		line, err := answers.ReadString('\n')
		if err != nil && (err != io.EOF || line == "") {
			return false, fmt.Errorf("no answer to %q: %w; pass --yes to confirm without asking", question, err)
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true, nil
		}
		return false, nil
	}
}

// Terminal opens the controlling terminal to ask on: stdin carries the
// subject, so the answer cannot come from there. The caller closes it.
func Terminal() (*os.File, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, errors.New("no terminal to ask for confirmation on; pass --yes to confirm without asking (in scripts)")
	}
	return tty, nil
}
