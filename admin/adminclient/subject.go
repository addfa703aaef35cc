package adminclient

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/lethe-privacy/lethe/admin"
)

// ReadSubject reads the subject from stdin (SubjectLine) and checks it as
// the admin API does (admin.CheckSubject). It never quotes the subject:
// it is personal data.
func ReadSubject(stdin io.Reader) (string, error) {
	subject, err := SubjectLine(stdin)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(subject) == "" {
		return "", errors.New("give the subject on stdin, e.g. `printf '%s\\n' \"$SUBJECT\" | lethe-proxy forget preview` (never as an argument: it would stay in shell history)")
	}
	if err := admin.CheckSubject(subject); err != nil {
		return "", err
	}
	return subject, nil
}

// SubjectLine is the first line of stdin without its line ending (one \n
// or \r\n). Nothing else is trimmed: the subject is matched byte for byte.
func SubjectLine(stdin io.Reader) (string, error) {
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("reading the subject from stdin: %w", err)
	}
	line, _ = strings.CutSuffix(line, "\n")
	line, _ = strings.CutSuffix(line, "\r")
	return line, nil
}
