package kafkaclient

import (
	"fmt"
	"strings"
)

// JAAS is one login module entry of a sasl.jaas.config value, such as
//
//	org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="secret";
type JAAS struct {
	LoginModule string            // the class name, as written
	ControlFlag string            // required, requisite, sufficient or optional (lower case)
	Options     map[string]string // username, password, ...
}

// Module returns the login module's simple class name (ScramLoginModule for the example above), so
// that a shaded or relocated package name still selects the module.
func (j JAAS) Module() string {
	return j.LoginModule[strings.LastIndexByte(j.LoginModule, '.')+1:]
}

// ParseJAAS parses a sasl.jaas.config value the way Kafka's JaasConfig does (a
// java.io.StreamTokenizer): a login module class, a control flag, key=value options whose values
// may be quoted with " or ' (with backslash escapes), and a terminating semicolon; // and /* */
// comments are skipped. As for any Kafka client, exactly one login module is allowed.
func ParseJAAS(s string) (JAAS, error) {
	toks, err := jaasTokens(s)
	if err != nil {
		return JAAS{}, err
	}
	var entries []JAAS
	for i := 0; i < len(toks); {
		if toks[i].kind != tokWord {
			return JAAS{}, fmt.Errorf("expected a login module class name, found %s", toks[i])
		}
		e := JAAS{LoginModule: toks[i].text, Options: map[string]string{}}
		i++
		if i == len(toks) || toks[i].kind != tokWord {
			return JAAS{}, fmt.Errorf("login module control flag not specified after %s", e.LoginModule)
		}
		switch flag := strings.ToLower(toks[i].text); flag {
		case "required", "requisite", "sufficient", "optional":
			e.ControlFlag = flag
		default:
			return JAAS{}, fmt.Errorf("invalid login module control flag %q (want required, requisite, sufficient or optional)", toks[i].text)
		}
		i++
		for i < len(toks) && toks[i].kind != tokSemicolon {
			key := toks[i]
			if key.kind != tokWord && key.kind != tokQuoted {
				return JAAS{}, fmt.Errorf("expected an option name, found %s", key)
			}
			if i+2 >= len(toks) || toks[i+1].kind != tokEquals || (toks[i+2].kind != tokWord && toks[i+2].kind != tokQuoted) {
				return JAAS{}, fmt.Errorf("value not specified for key %q", key.text)
			}
			e.Options[key.text] = toks[i+2].text
			i += 3
		}
		if i == len(toks) {
			return JAAS{}, fmt.Errorf("entry for %s is not terminated by a semicolon", e.LoginModule)
		}
		i++ // ;
		entries = append(entries, e)
	}
	switch len(entries) {
	case 0:
		return JAAS{}, fmt.Errorf("login module not specified")
	case 1:
		return entries[0], nil
	default:
		return JAAS{}, fmt.Errorf("%d login modules given, a client takes exactly 1", len(entries))
	}
}

type tokKind int

const (
	tokWord tokKind = iota
	tokQuoted
	tokEquals
	tokSemicolon
)

type token struct {
	kind tokKind
	text string
}

func (t token) String() string {
	switch t.kind {
	case tokEquals:
		return `"="`
	case tokSemicolon:
		return `";"`
	}
	return fmt.Sprintf("%q", t.text)
}

// jaasTokens splits s into words (letters, digits, '.', '-', '_', '$'), quoted strings, '=' and ';'.
func jaasTokens(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c <= ' ':
			i++
		case strings.HasPrefix(s[i:], "//"):
			for i < len(s) && s[i] != '\n' && s[i] != '\r' {
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("unterminated /* comment")
			}
			i += 2 + end + 2
		case c == '=':
			toks = append(toks, token{kind: tokEquals})
			i++
		case c == ';':
			toks = append(toks, token{kind: tokSemicolon})
			i++
		case c == '"' || c == '\'':
			text, n, err := jaasQuoted(s[i:])
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tokQuoted, text: text})
			i += n
		case isWordChar(c):
			j := i
			for j < len(s) && isWordChar(s[j]) {
				j++
			}
			toks = append(toks, token{kind: tokWord, text: s[i:j]})
			i = j
		default:
			return nil, fmt.Errorf("unexpected character %q", c)
		}
	}
	return toks, nil
}

func isWordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '-' || c == '_' || c == '$' || c >= 0x80
}

// jaasQuoted reads the quoted string at the start of s and returns its text and length, with the
// escapes StreamTokenizer knows (\n, \t, \\, \", \' and the others taken literally).
func jaasQuoted(s string) (string, int, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			return b.String(), i + 1, nil
		case c == '\n' || c == '\r':
			return "", 0, fmt.Errorf("quoted value %c%s... ends at a line break", q, b.String())
		case c == '\\' && i+1 < len(s):
			i++
			switch e := s[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, fmt.Errorf("quoted value %c%s... is not closed", q, b.String())
}
