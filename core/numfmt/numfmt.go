// Package numfmt owns the way kvsim writes numbers for people (the CLI's
// tables, the page, error messages): thousands separators and byte sizes.
// Report files never use it: they keep full precision.
package numfmt

import (
	"strconv"
	"strings"
)

// Thousands writes n with comma separators: 15568 → "15,568".
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Bytes writes a byte count in binary units with one decimal above a KiB:
// 1536 → "1.5 KiB", 3<<30 → "3.0 GiB".
func Bytes(n float64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return strconv.FormatFloat(n, 'f', 0, 64) + " B"
	}
	u := -1
	for n >= 1024 && u < len(units)-1 {
		n /= 1024
		u++
	}
	return strconv.FormatFloat(n, 'f', 1, 64) + " " + units[u:u+1] + "iB"
}
