package config

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ReadProperties reads a Java .properties file into a map.
func ReadProperties(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading worker config: %w", err)
	}
	props, err := ParseProperties(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return props, nil
}

// ParseProperties parses the java.util.Properties text format: "key=value", "key: value" or
// "key value" lines, '#' and '!' comments, backslash line continuations and escapes (\t \n \uXXXX).
// Later keys override earlier ones, as in Java.
func ParseProperties(b []byte) (map[string]string, error) {
	props := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	lineNo := 0
	var logical strings.Builder
	startLine := 0
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if logical.Len() == 0 {
			line = strings.TrimLeft(line, " \t\f")
			if line == "" || line[0] == '#' || line[0] == '!' {
				continue
			}
			startLine = lineNo
		} else {
			line = strings.TrimLeft(line, " \t\f")
		}
		if continues(line) {
			logical.WriteString(line[:len(line)-1])
			continue
		}
		logical.WriteString(line)
		k, v, err := splitProperty(logical.String())
		logical.Reset()
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", startLine, err)
		}
		props[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if logical.Len() > 0 {
		k, v, err := splitProperty(logical.String())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", startLine, err)
		}
		props[k] = v
	}
	return props, nil
}

// continues reports whether a line ends in an odd number of backslashes.
func continues(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

func splitProperty(s string) (key, value string, err error) {
	i := 0
	for i < len(s) {
		c := s[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		i++
	}
	rawKey := s[:min(i, len(s))]
	rest := ""
	if i < len(s) {
		rest = strings.TrimLeft(s[i:], " \t\f")
		if rest != "" && (rest[0] == '=' || rest[0] == ':') {
			rest = strings.TrimLeft(rest[1:], " \t\f")
		}
	}
	if key, err = unescape(rawKey); err != nil {
		return "", "", err
	}
	if value, err = unescape(rest); err != nil {
		return "", "", fmt.Errorf("value of %q: %w", key, err)
	}
	return key, value, nil
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf(`malformed \uXXXX escape`)
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 32)
			if err != nil {
				return "", fmt.Errorf(`malformed \uXXXX escape %q`, s[i-1:i+5])
			}
			b.WriteRune(rune(r))
			i += 4
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r)
			i += size - 1
		}
	}
	return b.String(), nil
}

// SplitList splits a Kafka LIST setting: comma-separated, each item trimmed, empty items dropped.
func SplitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
