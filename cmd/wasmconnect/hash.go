package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wasmconnect/wasmconnect/runtime/rest"
)

// runHash prints the hash of a secret read from stdin, in the form the REST credential files take:
// `wasmconnect hash password` for a rest.auth.basic.file line (PBKDF2-SHA256, passlib's format, so
// files written with passlib work too), `wasmconnect hash token` for rest.auth.tokens.file. The
// secret is read from stdin, not from the arguments, so that it stays out of shell history and ps.
func runHash(_ context.Context, args []string) error {
	if len(args) != 1 || (args[0] != "password" && args[0] != "token") {
		return errors.New("usage: wasmconnect hash password|token < secret (the first line of stdin)")
	}
	secret, err := readSecret(os.Stdin)
	if err != nil {
		return err
	}
	var hash string
	if args[0] == "password" {
		if hash, err = rest.HashPassword(secret); err != nil {
			return err
		}
	} else {
		hash = rest.HashToken(secret)
	}
	fmt.Println(hash)
	return nil
}

// readSecret reads the first line of r, without its line ending.
func readSecret(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("reading the secret from stdin: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("no secret on stdin")
	}
	return line, nil
}
