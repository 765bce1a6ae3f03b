package connect

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Connect's Decimal is the unscaled value as big-endian two's-complement bytes (Java's
// BigInteger.toByteArray) with the scale in the schema's "scale" parameter; its Go value is a
// *big.Rat. The scale may be negative, as a BigDecimal's may.

func decimalScale(s *Schema) int {
	n, _ := strconv.Atoi(s.Parameters["scale"])
	return n
}

// pow10 returns 10^n as a rational, for a negative n too.
func pow10(n int) *big.Rat {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(n, -n))), nil)
	if n < 0 {
		return new(big.Rat).SetFrac(big.NewInt(1), p)
	}
	return new(big.Rat).SetInt(p)
}

// unscaled returns r * 10^scale, the unscaled value of r at scale; false if r has more fractional
// digits than scale allows (Java's "Rounding necessary").
func unscaled(r *big.Rat, scale int) (*big.Int, bool) {
	m := new(big.Rat).Mul(r, pow10(scale))
	if !m.IsInt() {
		return nil, false
	}
	return new(big.Int).Set(m.Num()), true
}

// decimalFromBytes reads the two's-complement unscaled value b at scale.
func decimalFromBytes(b []byte, scale int) *big.Rat {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return new(big.Rat).Mul(new(big.Rat).SetInt(n), pow10(-scale))
}

// decimalFromText reads a decimal written as a JSON number; it fails if the number has more
// fractional digits than scale allows.
func decimalFromText(num string, scale int) (*big.Rat, error) {
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return nil, fmt.Errorf("%s is not a number", num)
	}
	if _, ok := unscaled(r, scale); !ok {
		return nil, roundingError(num, scale)
	}
	return r, nil
}

func roundingError(num string, scale int) error {
	return fmt.Errorf("%s does not fit scale %d (rounding necessary)", num, scale)
}

// decimalBytes returns the unscaled value of r at scale as BigInteger.toByteArray does: the
// minimal big-endian two's complement.
func decimalBytes(r *big.Rat, scale int) ([]byte, error) {
	x, ok := unscaled(r, scale)
	if !ok {
		return nil, roundingError(r.FloatString(10), scale)
	}
	if x.Sign() >= 0 {
		b := x.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b, nil
	}
	// The smallest n with -2^(8n-1) <= x; ^x = -x-1 >= 0.
	n := new(big.Int).Not(x).BitLen()/8 + 1
	b := new(big.Int).Add(x, new(big.Int).Lsh(big.NewInt(1), uint(8*n))).Bytes()
	for len(b) < n {
		b = append([]byte{0}, b...)
	}
	return b, nil
}

// decimalText writes r as a plain decimal number with scale fractional digits, as BigDecimal's
// toPlainString does (decimal.format=NUMERIC).
func decimalText(r *big.Rat, scale int) (string, error) {
	x, ok := unscaled(r, scale)
	if !ok {
		return "", roundingError(r.FloatString(10), scale)
	}
	if scale <= 0 {
		return new(big.Int).Mul(x, pow10(-scale).Num()).String(), nil
	}
	digits := new(big.Int).Abs(x).String()
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	s := digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	if x.Sign() < 0 {
		s = "-" + s
	}
	return s, nil
}
