package state

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// InternalNote is what the page says instead of an internal error's text.
const InternalNote = "Internal error in the simulator (a bug in kvsim, not in your input). " +
	"The details below help a bug report."

// internalMarks are the words of a Go panic, a runtime error or a stack
// trace: text for a bug report, not for the page's message.
var internalMarks = []string{"goroutine ", "panic", "runtime error", "fatal error", "internal error"}

// Clip shortens s to at most n bytes (on a rune boundary), ending it with
// " … (N bytes)" when it was longer.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + " … (" + strconv.Itoa(len(s)) + " bytes)"
}

// SplitError is how the page shows an error message: short is the line
// shown, detail (collapsed, for copying into a report) is the original
// text of an internal error and "" for every other message, which shows
// as it is.
func SplitError(msg string) (short, detail string) {
	low := strings.ToLower(msg)
	for _, m := range internalMarks {
		if strings.Contains(low, m) {
			return InternalNote, msg
		}
	}
	return msg, ""
}
