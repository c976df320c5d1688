package config

import (
	"fmt"
	"math/big"
	"strings"
)

// sizeUnits are the units of ParseSize: K, M, G, T and KiB... TiB are
// powers of 1024 (as systemd, Docker and the kernel's cgroup files read
// K, M and G), KB... TB powers of 1000, B bytes.
var sizeUnits = map[string]int64{
	"b": 1,
	"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
	"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
	"t": 1 << 40, "tib": 1 << 40, "tb": 1e12,
}

// ParseSize reads a size of memory or disk as every key of jlgcli takes it:
// a decimal number and its unit, with nothing between nor around them
// but spaces at the ends ("512MiB", "8GiB", "2G", "1.5GB"); see sizeUnits.
// A number without a unit is refused, as a duration's is: 512 could be
// bytes or MiB to a reader. The error says what to write; the caller names
// the key.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(t[i:])
	bad := fmt.Errorf("%q is not a size such as 512MiB, 8GiB or 2G", s)
	if !isNumber(num) || strings.HasPrefix(num, ".") || strings.HasSuffix(num, ".") {
		return 0, bad
	}
	if unit == "" {
		return 0, fmt.Errorf("%q has no unit; write %sMiB or %sGiB", s, num, num)
	}
	mult, ok := sizeUnits[unit]
	if !ok {
		return 0, bad
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, bad
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	n := new(big.Int).Quo(r.Num(), r.Denom()) // whole bytes, rounded down
	if !n.IsInt64() {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n.Int64(), nil
}

// FormatSize writes n bytes in the largest binary unit that holds it whole
// ("8GiB", "1536MiB"), else in bytes ("1000B").
func FormatSize(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%dB", n)
}
