package adminclient

import (
	"fmt"
	"io"
	"os"
)

// WriteCertificate writes the certificate of request id as the server
// sent it, byte for byte (the signature covers those bytes): to file,
// saying so on stderr, or to stdout when file is empty.
func WriteCertificate(id string, body []byte, file string, stdout, stderr io.Writer) error {
	if file == "" {
		stdout.Write(body)
		return nil
	}
	if err := os.WriteFile(file, body, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "certificate of request %s written to %s\n", id, file)
	return nil
}
