package architecture

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/kvsim/kvsim/"

// frontEnds are the directories of the front ends (with their tests and
// their subpackages).
var frontEnds = []string{"cmd/kvsim", "cmd/worker", "wasm", "worker", "ui"}

// engineInternals are the core packages only core/replay (and the core
// itself) may import: the engine and everything it is built from.
var engineInternals = []string{
	"core/engine", "core/scheduler", "core/connector", "core/g1", "core/g2", "core/g3",
	"core/transfer", "core/identity", "core/request", "core/placement", "core/load",
}

// noIO are the standard packages that reach outside the process or read
// the wall clock: the core (outside its tests) imports none of them.
var noIO = []string{
	"os", "os/exec", "os/signal", "os/user", "io/ioutil", "path/filepath", "net", "net/http",
	"syscall", "syscall/js", "time", "log", "log/slog", "plugin", "runtime/debug",
}

// coreMay are the packages outside the standard library the core may
// import.
var coreMay = []string{module + "core/", module + "traces", "github.com/goccy/go-yaml"}

// imports maps every .go file under dir (tests included when tests is set)
// to its import paths. Build tags are ignored: a file for GOOS=js counts.
func imports(t *testing.T, dir string, tests bool) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	root := filepath.Join("..", dir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || (!tests && strings.HasSuffix(p, "_test.go")) {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, s := range f.Imports {
			ip, _ := strconv.Unquote(s.Path.Value)
			out[p] = append(out[p], ip)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no Go files under %s", root)
	}
	return out
}

// TestFrontEndsUseTheDoor: the CLI, the Web Worker bridge, the Cloudflare
// Worker and the page import core/replay (and the data packages around it:
// config, trace, report, record, sweep), never the engine's parts.
func TestFrontEndsUseTheDoor(t *testing.T) {
	for _, dir := range frontEnds {
		for file, ips := range imports(t, dir, true) {
			for _, ip := range ips {
				if slices.Contains(engineInternals, strings.TrimPrefix(ip, module)) {
					t.Errorf("%s imports %s: front ends enter the core through core/replay", file, ip)
				}
			}
		}
	}
}

// TestCoreDoesNoIO: the core's packages (outside their tests) import no
// package that does I/O, reads the clock or touches JavaScript, and
// nothing outside the core but the built-in examples and the YAML parser.
func TestCoreDoesNoIO(t *testing.T) {
	for file, ips := range imports(t, "core", false) {
		for _, ip := range ips {
			if slices.Contains(noIO, ip) || strings.HasPrefix(ip, "net/") {
				t.Errorf("%s imports %s: the core does no I/O (front ends hand it openers)", file, ip)
			}
			if strings.Contains(strings.Split(ip, "/")[0], ".") && !slices.ContainsFunc(coreMay, func(p string) bool { return strings.HasPrefix(ip, p) }) {
				t.Errorf("%s imports %s: the core imports only itself, traces and go-yaml", file, ip)
			}
		}
	}
}

// TestTheTestsSeeEveryLayer guards the two tests above against a renamed
// directory: each front end and the core must have files with imports.
func TestTheTestsSeeEveryLayer(t *testing.T) {
	for _, dir := range append(slices.Clone(frontEnds), "core", "core/replay") {
		if len(imports(t, dir, false)) == 0 {
			t.Errorf("%s has no Go files", dir)
		}
	}
}
