// Package diag renders positioned input errors in the one form every
// reader of user input (config, traces) uses: "file:line:col: field: msg",
// leaving out the position when line is 0 and the field when it is "".
// Editors and terminals turn that form into a jump to the offending text.
package diag

import (
	"strconv"
	"strings"
)

// Format renders one positioned error.
func Format(file string, line, col int, field, msg string) string {
	var b strings.Builder
	b.WriteString(file)
	if line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(line))
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(col))
	}
	b.WriteString(": ")
	if field != "" {
		b.WriteString(field)
		b.WriteString(": ")
	}
	b.WriteString(msg)
	return b.String()
}
