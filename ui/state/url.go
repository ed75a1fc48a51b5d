package state

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
)

// Share is everything a link restores: the config (an example's, or any
// YAML), the uploaded trace it needs, the compare set-up and the place in
// the pass view. Fragment and ParseFragment round-trip it.
type Share struct {
	// Example is a guided example's id; YAML is the config text, left out of
	// the link when it equals the example's.
	Example string
	YAML    string
	// Upload names the uploaded trace the config reads (by the path the
	// config uses and the trace's hash), when it reads one.
	Upload *UploadRef
	// Compare is the compare set-up, nil in single-run mode.
	Compare *Compare
	// Pass, Rank and Variant place the pass view (0: not set).
	Pass, Rank, Variant int
	// View is "sweep" for the sweep view ("" for the run view).
	View string
	// SweepVary is the sweep view's grid (one --vary per line; "": the
	// default grid) and SweepSource its config ("": the built-in one).
	SweepVary, SweepSource string
}

// UploadRef identifies an uploaded trace.
type UploadRef struct {
	Name string
	Hash string // TraceHash of its text
}

// TraceHash is a short content hash for uploaded traces (the first 12 hex
// digits of SHA-256).
func TraceHash(text []byte) string {
	h := sha256.Sum256(text)
	return hex.EncodeToString(h[:6])
}

// Fragment encodes s as a URL fragment (without the '#').
func (s Share) Fragment() string {
	v := url.Values{}
	if s.Example != "" {
		v.Set("ex", s.Example)
	}
	if ex := ExampleByID(s.Example); s.YAML != "" && (ex == nil || ex.YAML() != s.YAML) {
		v.Set("y", packText(s.YAML))
	}
	if s.Upload != nil {
		v.Set("t", s.Upload.Name+":"+s.Upload.Hash)
	}
	if s.Compare != nil {
		v.Set("cmp", s.Compare.String())
	} else if ex := ExampleByID(s.Example); ex != nil && ex.Compare != nil {
		v.Set("cmp", "off")
	}
	if s.Pass > 0 {
		v.Set("pass", strconv.Itoa(s.Pass))
	}
	if s.Rank > 0 {
		v.Set("rank", strconv.Itoa(s.Rank))
	}
	if s.Variant > 0 {
		v.Set("v", strconv.Itoa(s.Variant))
	}
	if s.View != "" {
		v.Set("view", s.View)
	}
	if s.SweepVary != "" {
		v.Set("sv", packText(s.SweepVary))
	}
	if s.SweepSource != "" {
		v.Set("ss", s.SweepSource)
	}
	return v.Encode()
}

// ParseFragment decodes a fragment (with or without the '#'). An empty
// fragment is the default example.
func ParseFragment(frag string) (Share, error) {
	frag = strings.TrimPrefix(frag, "#")
	if frag == "" {
		ex := DefaultExample()
		return ex.Share(), nil
	}
	v, err := url.ParseQuery(frag)
	if err != nil {
		return Share{}, fmt.Errorf("the link is damaged: %v", err)
	}
	var s Share
	if id := v.Get("ex"); id != "" {
		ex := ExampleByID(id)
		if ex == nil {
			return Share{}, fmt.Errorf("the link names an unknown example %q", id)
		}
		s = ex.Share()
	}
	if y := v.Get("y"); y != "" {
		text, err := unpackText(y)
		if err != nil {
			return Share{}, fmt.Errorf("the link's config is damaged: %v", err)
		}
		s.YAML = text
	}
	if s.YAML == "" && v.Get("ex") == "" && v.Get("y") == "" && v.Get("view") != "" {
		s = DefaultExample().Share() // a link to a view alone
	}
	if s.YAML == "" {
		return Share{}, fmt.Errorf("the link holds no config")
	}
	if t := v.Get("t"); t != "" {
		name, hash, ok := strings.Cut(t, ":")
		if !ok || name == "" || hash == "" {
			return Share{}, fmt.Errorf("the link's trace reference %q is damaged", t)
		}
		s.Upload = &UploadRef{Name: name, Hash: hash}
	}
	switch c := v.Get("cmp"); c {
	case "": // the example's own set-up
	case "off":
		s.Compare = nil
	default:
		cmp, err := ParseCompare(c)
		if err != nil {
			return Share{}, err
		}
		s.Compare = &cmp
	}
	s.Pass, _ = strconv.Atoi(v.Get("pass"))
	s.Rank, _ = strconv.Atoi(v.Get("rank"))
	s.Variant, _ = strconv.Atoi(v.Get("v"))
	if v.Get("view") == "sweep" {
		s.View = "sweep"
	}
	if sv := v.Get("sv"); sv != "" {
		text, err := unpackText(sv)
		if err != nil {
			return Share{}, fmt.Errorf("the link's sweep grid is damaged: %v", err)
		}
		s.SweepVary = text
	}
	s.SweepSource = v.Get("ss")
	return s, nil
}

// packText is deflate + unpadded base64url.
func packText(s string) string {
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.BestCompression)
	w.Write([]byte(s))
	w.Close()
	return base64.RawURLEncoding.EncodeToString(b.Bytes())
}

func unpackText(p string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return "", err
	}
	out, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(raw)), 1<<20))
	if err != nil {
		return "", err
	}
	return string(out), nil
}
