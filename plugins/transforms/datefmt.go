package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// javaLayout is a java.text.SimpleDateFormat pattern, formatted and parsed in UTC as Kafka's
// TimestampConverter and TimestampRouter use it. It supports the letters y M d H h k K m s S E a z
// Z X and quoted text.
type javaLayout struct {
	java   string
	tokens []dateToken
}

type dateToken struct {
	letter byte // 0: literal text
	n      int
	text   string
}

func parseJavaLayout(p string) (*javaLayout, error) {
	l := &javaLayout{java: p}
	lit := func(s string) {
		if k := len(l.tokens) - 1; k >= 0 && l.tokens[k].letter == 0 {
			l.tokens[k].text += s
			return
		}
		l.tokens = append(l.tokens, dateToken{text: s})
	}
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\'':
			if i+1 < len(p) && p[i+1] == '\'' {
				lit("'")
				i += 2
				continue
			}
			j := strings.IndexByte(p[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("Unterminated quote")
			}
			lit(p[i+1 : i+1+j])
			i += j + 2
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			if !strings.ContainsRune("yMdHhkKmsSEazZXu", rune(c)) {
				return nil, fmt.Errorf("Illegal pattern character '%c'", c)
			}
			n := 1
			for i+n < len(p) && p[i+n] == c {
				n++
			}
			l.tokens = append(l.tokens, dateToken{letter: c, n: n})
			i += n
		default:
			lit(string(c))
			i++
		}
	}
	return l, nil
}

func pad(dst []byte, v, n int) []byte {
	s := strconv.Itoa(v)
	for i := len(s); i < n; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

func (l *javaLayout) format(t time.Time) string {
	t = t.UTC()
	var b []byte
	for _, tk := range l.tokens {
		switch tk.letter {
		case 0:
			b = append(b, tk.text...)
		case 'y':
			if tk.n == 2 {
				b = pad(b, t.Year()%100, 2)
			} else {
				b = pad(b, t.Year(), tk.n)
			}
		case 'M':
			switch {
			case tk.n >= 4:
				b = append(b, t.Month().String()...)
			case tk.n == 3:
				b = append(b, t.Month().String()[:3]...)
			default:
				b = pad(b, int(t.Month()), tk.n)
			}
		case 'd':
			b = pad(b, t.Day(), tk.n)
		case 'H':
			b = pad(b, t.Hour(), tk.n)
		case 'k':
			h := t.Hour()
			if h == 0 {
				h = 24
			}
			b = pad(b, h, tk.n)
		case 'K':
			b = pad(b, t.Hour()%12, tk.n)
		case 'h':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			b = pad(b, h, tk.n)
		case 'm':
			b = pad(b, t.Minute(), tk.n)
		case 's':
			b = pad(b, t.Second(), tk.n)
		case 'S':
			b = pad(b, t.Nanosecond()/1e6, tk.n)
		case 'E':
			if tk.n >= 4 {
				b = append(b, t.Weekday().String()...)
			} else {
				b = append(b, t.Weekday().String()[:3]...)
			}
		case 'u':
			wd := int(t.Weekday())
			if wd == 0 {
				wd = 7
			}
			b = pad(b, wd, tk.n)
		case 'a':
			if t.Hour() < 12 {
				b = append(b, "AM"...)
			} else {
				b = append(b, "PM"...)
			}
		case 'z':
			if tk.n >= 4 {
				b = append(b, "Coordinated Universal Time"...)
			} else {
				b = append(b, "UTC"...)
			}
		case 'Z':
			b = append(b, "+0000"...)
		case 'X':
			b = append(b, 'Z')
		}
	}
	return string(b)
}

// parse reads s as SimpleDateFormat does, strictly: numbers take all their digits unless the next
// token is a number too (then exactly n digits).
func (l *javaLayout) parse(s string) (time.Time, error) {
	year, month, day, hour, min_, sec, ms := 1970, 1, 1, 0, 0, 0, 0
	pm, has12 := false, false
	off := 0
	i := 0
	bad := fmt.Errorf("Unparseable date: %q", s)
	for k, tk := range l.tokens {
		if tk.letter == 0 {
			if !strings.HasPrefix(s[i:], tk.text) {
				return time.Time{}, bad
			}
			i += len(tk.text)
			continue
		}
		numeric := strings.IndexByte("yMdHhkKmsSu", tk.letter) >= 0 && !(tk.letter == 'M' && tk.n >= 3)
		if numeric {
			j := i
			if j < len(s) && (s[j] == '-' || s[j] == '+') && tk.letter == 'y' {
				j++
			}
			limit := len(s)
			if k+1 < len(l.tokens) && l.tokens[k+1].letter != 0 {
				limit = min(len(s), i+tk.n)
			}
			for j < limit && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			v, err := strconv.Atoi(s[i:j])
			if err != nil {
				return time.Time{}, bad
			}
			width := j - i
			i = j
			switch tk.letter {
			case 'y':
				year = v
				if tk.n <= 2 && width <= 2 {
					year = 2000 + v
				}
			case 'M':
				month = v
			case 'd':
				day = v
			case 'H', 'k':
				hour = v % 24
			case 'h', 'K':
				hour, has12 = v%12, true
			case 'm':
				min_ = v
			case 's':
				sec = v
			case 'S':
				ms = v
			}
			continue
		}
		rest := s[i:]
		switch tk.letter {
		case 'M':
			found := false
			for m := time.January; m <= time.December; m++ {
				for _, name := range []string{m.String(), m.String()[:3]} {
					if len(rest) >= len(name) && strings.EqualFold(rest[:len(name)], name) {
						month, i, found = int(m), i+len(name), true
						break
					}
				}
				if found {
					break
				}
			}
			if !found {
				return time.Time{}, bad
			}
		case 'E':
			found := false
			for d := time.Sunday; d <= time.Saturday; d++ {
				for _, name := range []string{d.String(), d.String()[:3]} {
					if len(rest) >= len(name) && strings.EqualFold(rest[:len(name)], name) {
						i, found = i+len(name), true
						break
					}
				}
				if found {
					break
				}
			}
			if !found {
				return time.Time{}, bad
			}
		case 'a':
			switch {
			case len(rest) >= 2 && strings.EqualFold(rest[:2], "AM"):
			case len(rest) >= 2 && strings.EqualFold(rest[:2], "PM"):
				pm = true
			default:
				return time.Time{}, bad
			}
			i += 2
		case 'z', 'Z', 'X':
			n, o, ok := parseZone(rest)
			if !ok {
				return time.Time{}, bad
			}
			i, off = i+n, o
		}
	}
	// Like DateFormat.parse(String), text after the pattern is ignored.
	if has12 && pm {
		hour += 12
	}
	t := time.Date(year, time.Month(month), day, hour, min_, sec, ms*1e6, time.UTC)
	return t.Add(-time.Duration(off) * time.Second), nil
}

// parseZone reads Z, UTC, GMT, GMT+hh:mm, +hhmm, +hh:mm or +hh; it returns the length read and the
// offset in seconds.
func parseZone(s string) (int, int, bool) {
	switch {
	case strings.HasPrefix(s, "Coordinated Universal Time"):
		return len("Coordinated Universal Time"), 0, true
	case strings.HasPrefix(s, "Z"):
		return 1, 0, true
	case strings.HasPrefix(s, "UTC"), strings.HasPrefix(s, "GMT"):
		n, off, ok := parseZone(s[3:])
		if ok && n > 0 && s[3] != 'Z' && s[3] != 'U' && s[3] != 'G' {
			return 3 + n, off, true
		}
		return 3, 0, true
	}
	if len(s) < 3 || (s[0] != '+' && s[0] != '-') {
		return 0, 0, false
	}
	digits := func(p string) (int, bool) {
		if len(p) < 2 || p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9' {
			return 0, false
		}
		return int(p[0]-'0')*10 + int(p[1]-'0'), true
	}
	h, ok := digits(s[1:])
	if !ok {
		return 0, 0, false
	}
	n, m := 3, 0
	if len(s) >= 6 && s[3] == ':' {
		if mm, ok := digits(s[4:]); ok {
			n, m = 6, mm
		}
	} else if mm, ok := digits(s[3:]); ok {
		n, m = 5, mm
	}
	off := h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	return n, off, true
}
