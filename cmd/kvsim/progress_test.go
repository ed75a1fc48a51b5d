package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestProgress(t *testing.T) {
	if p := newProgress(&bytes.Buffer{}, false); p != nil {
		t.Fatal("a progress bar without a terminal")
	}
	var nilBar *progress
	nilBar.finish() // must not panic

	var out bytes.Buffer
	now := time.Unix(0, 0)
	p := newProgress(&out, true)
	p.start, p.now = now, func() time.Time { return now }

	p.update(10, 100) // before one second: silent
	if out.Len() != 0 {
		t.Fatalf("drew before one second: %q", out.String())
	}
	now = now.Add(1500 * time.Millisecond)
	p.update(50, 100)
	if got := out.String(); !strings.HasPrefix(got, "\r[###############...............]  50%  50/100 requests  1.5s") {
		t.Fatalf("bar %q", got)
	}
	out.Reset()
	now = now.Add(10 * time.Millisecond)
	p.update(60, 100)  // within 100 ms of the last draw: skipped
	p.update(100, 100) // the end is always drawn
	if got := out.String(); !strings.Contains(got, "100%  100/100") || strings.Contains(got, " 60%") {
		t.Fatalf("bar %q", got)
	}
	out.Reset()
	p.finish()
	if out.String() != "\r\033[K" {
		t.Fatalf("finish wrote %q", out.String())
	}
}
