package state

import "strings"

// InternalNote is what the page says instead of an internal error's text.
const InternalNote = "Internal error in the simulator (a bug in kvsim, not in your input). " +
	"The details below help a bug report."

// internalMarks are the words of a Go panic, a runtime error or a stack
// trace: text for a bug report, not for the page's message.
var internalMarks = []string{"goroutine ", "panic", "runtime error", "fatal error", "internal error"}

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
