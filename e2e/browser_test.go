// Package e2e drives the built browser app in headless Chromium (chromedp)
// the way a user does: it clicks controls, types values, uploads files and
// reads the numbers from the page. TestMain builds the site from the
// current sources into a temporary dist (or uses KVSIM_SITE, a built dist/)
// and serves it on 127.0.0.1. Without /usr/bin/chromium (CHROMIUM
// overrides the path) the tests skip, unless E2E_REQUIRED=1: then they
// fail. Screenshots of each view go to build/screenshots/.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

var (
	siteURL  string // the served site, with a trailing slash
	siteDir  string // the built site's directory
	repoRoot string
	shared   context.Context // the shared browser (tabs are children)
	skipWhy  string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	_, file, _, _ := runtime.Caller(0)
	repoRoot = filepath.Dir(filepath.Dir(file))
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		skipWhy = "no chromium at " + chromium + " (apt-get install chromium; E2E_REQUIRED=1 makes this a failure)"
		return m.Run()
	}
	site := os.Getenv("KVSIM_SITE")
	if site != "" && !filepath.IsAbs(site) {
		site = filepath.Join(repoRoot, site)
	}
	if site == "" {
		dir, err := os.MkdirTemp("", "kvsim-site-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		if err := buildSite(dir); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: building the site:", err)
			return 1
		}
		site = dir
	}
	siteDir = site
	srv := httptest.NewServer(mooncakeHandler(http.FileServer(http.Dir(site))))
	defer srv.Close()
	siteURL = srv.URL + "/"

	// Chromium gets a HOME of its own; the go command the tests run
	// (TestSweepView's `go run ./cmd/kvsim`) keeps the user's caches, which
	// it finds from HOME unless told: with an empty build and module cache
	// it rebuilt the CLI and its dependencies from scratch (38 s on 2 cores).
	keepGoCaches()
	home, _ := os.MkdirTemp("", "kvsim-chromium-home-")
	defer os.RemoveAll(home)
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", home)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.UserDataDir(filepath.Join(home, "profile")),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.WindowSize(1440, 1000),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	if err := chromedp.Do(bctx); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: starting chromium:", err)
		return 1
	}
	shared = bctx
	return m.Run()
}

// keepGoCaches pins GOCACHE, GOMODCACHE and GOPATH in the environment to
// the go command's current answers, so that changing HOME does not change
// them.
func keepGoCaches() {
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		return // the tests that run go say why
	}
	vals := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		if i < len(vals) && vals[i] != "" && os.Getenv(name) == "" {
			os.Setenv(name, vals[i])
		}
	}
}

// buildSite builds main.wasm and sim.wasm from the current sources and
// lays the site out as build_ui does.
func buildSite(dir string) error {
	for pkg, out := range map[string]string{"./ui": "main.wasm", "./wasm": "sim.wasm"} {
		cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, out), pkg)
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v\n%s", pkg, err, b)
		}
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return err
	}
	copies := map[string]string{
		filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec.js"): "wasm_exec.js",
		filepath.Join(repoRoot, "index.html"):                                           "index.html",
	}
	entries, err := os.ReadDir(filepath.Join(repoRoot, "public"))
	if err != nil {
		return err
	}
	for _, e := range entries {
		copies[filepath.Join(repoRoot, "public", e.Name())] = filepath.Join("public", e.Name())
	}
	if err := writeGzip(filepath.Join(repoRoot, "traces", "mooncake", "conversation_trace.jsonl"),
		filepath.Join(dir, "traces", "conversation_trace.jsonl.gz")); err != nil {
		return err
	}
	for from, to := range copies {
		b, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		p := filepath.Join(dir, to)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// tab is one browser tab for one test, with the page's exceptions and
// console errors collected (a test fails on any).
type tab struct {
	t   *testing.T
	ctx context.Context
}

func newTab(t *testing.T) *tab {
	t.Helper()
	return newTabFor(t, 3*time.Minute)
}

// newTabFor is newTab with a longer time limit for the whole tab.
func newTabFor(t *testing.T, limit time.Duration) *tab {
	t.Helper()
	if skipWhy != "" {
		if os.Getenv("E2E_REQUIRED") == "1" {
			t.Fatal(skipWhy)
		}
		t.Skip(skipWhy)
	}
	ctx, cancel := chromedp.NewContext(shared)
	ctx, cancelT := context.WithTimeout(ctx, limit)
	tb := &tab{t: t, ctx: ctx}
	exc := chromedp.Events(ctx, cdpruntime.ExceptionThrown)
	cons := chromedp.Events(ctx, cdpruntime.ConsoleAPICalled)
	var problems []string
	done := make(chan struct{}, 2)
	go func() {
		for ev, err := range exc {
			if err != nil {
				break
			}
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text+" "+describe(ev.ExceptionDetails.Exception))
		}
		done <- struct{}{}
	}()
	go func() {
		for ev, err := range cons {
			if err != nil {
				break
			}
			if os.Getenv("E2E_LOG") != "" {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, describe(a))
				}
				t.Logf("console.%s: %s", ev.Type, strings.Join(parts, " "))
			}
			if ev.Type == cdpruntime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, describe(a))
				}
				problems = append(problems, "console.error: "+strings.Join(parts, " "))
			}
		}
		done <- struct{}{}
	}()
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if fatal, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('.fatal')?.textContent ?? ''`)); fatal != "" {
			problems = append(problems, "the app reported: "+fatal)
		}
		// no Go stack trace or panic text is ever shown open (internal
		// errors keep it under a collapsed "details")
		shown, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ''`))
		for _, w := range internalWords {
			if strings.Contains(strings.ToLower(shown), w) {
				problems = append(problems, fmt.Sprintf("the page shows %q", w))
			}
		}
		cancelT()
		cancel()
		<-done
		<-done
		for _, p := range problems {
			t.Errorf("page: %s", p)
		}
	})
	return tb
}

// internalWords are words of Go's panics and stack traces, which no page
// text may show.
var internalWords = []string{"goroutine", "panic", "runtime error"}

func describe(o *cdpruntime.RemoteObject) string {
	if o == nil {
		return ""
	}
	if len(o.Value) > 0 {
		return string(o.Value)
	}
	return o.Description
}

// do runs actions and fails the test on an error.
func (tb *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	if err := chromedp.Do(tb.ctx, actions...); err != nil {
		tb.t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression (awaiting a promise).
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// waitSlack stretches every wait: a wait returns as soon as its predicate
// holds, so the slack costs nothing on a quiet machine and keeps a loaded
// CI machine (2 cores, the Go build and Chromium competing) from failing a
// wait that was merely slow.
const waitSlack = 4

// wait polls a JavaScript predicate.
//
// A poll that starts while a navigation replaces the document can name
// the old document's execution context, which Chrome then reports as
// missing ("Cannot find context with specified id"); CI met this once
// right after a Navigate. Such a poll is started again in the new
// document until the deadline.
func (tb *tab) wait(what, expr string, timeout time.Duration) {
	tb.t.Helper()
	deadline := time.Now().Add(waitSlack * timeout)
	for {
		_, err := chromedp.Run(tb.ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(time.Until(deadline)),
			chromedp.WithPollingInterval(20*time.Millisecond)))
		if err == nil {
			return
		}
		if strings.Contains(err.Error(), "Cannot find context with specified id") && time.Until(deadline) > 0 {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		tb.t.Fatalf("waiting for %s: %v\npage status: %s", what, err, tb.status())
	}
}

// status describes the page for failure messages.
func (tb *tab) status() string {
	s, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`JSON.stringify({
		status: document.querySelector('#status')?.textContent, run: !!document.querySelector('#run')?.disabled,
		errors: [...document.querySelectorAll('.err')].map(e => e.textContent),
		notes: [...document.querySelectorAll('.note')].map(e => e.textContent),
		body: document.body ? document.body.innerHTML.slice(0, 300) : location.href})`))
	return s
}

// open loads the app at the given fragment and waits until it has
// mounted and its worker is idle.
func (tb *tab) open(fragment string) {
	tb.t.Helper()
	tb.do(chromedp.Navigate(siteURL + fragment))
	tb.wait("the app", `document.querySelector('#run, #sweep-run') !== null`, 30*time.Second)
	tb.idle()
}

// idle waits until no run is in progress and the results of the last one
// (if any) are shown.
func (tb *tab) idle() {
	tb.t.Helper()
	tb.wait("an idle worker", `document.querySelector('#app[data-ready]:not([data-busy])') !== null`, 60*time.Second)
}

// text is an element's text content ("" when missing).
func (tb *tab) text(css string) string {
	tb.t.Helper()
	b, _ := json.Marshal(css)
	return eval[string](tb, fmt.Sprintf(`(document.querySelector(%s)?.textContent ?? '').trim()`, b))
}

// typeInto replaces a text input's content the way a user does: select
// it, type, and leave it with Tab (which fires change).
//
// It first lets the page finish rendering the last change: a field's
// value is bound to the page's state, and a render that lands between
// keystrokes writes the previous value back (a typist would see the
// field flash and type again; the test would read a mangled value).
func (tb *tab) typeInto(id, value string) {
	tb.t.Helper()
	tb.settle()
	tb.do(chromedp.Click(chromedp.ID(id)))
	tb.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById(%q).select()`, id)))
	tb.do(chromedp.SendKeys(chromedp.ID(id), value+"\t"))
}

// settle waits two animation frames and a short timer: long enough for
// the renders an event queues to land.
func (tb *tab) settle() {
	tb.t.Helper()
	eval[bool](tb, `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => r(true), 50))))`)
}

// runs is the page's count of finished runs.
func (tb *tab) runs() int {
	tb.t.Helper()
	return eval[int](tb, `+(document.querySelector('#status')?.dataset.runs ?? -1)`)
}

// clickRun presses Run and waits for its results; it returns the time
// from the click to the results on the page, measured in the page.
func (tb *tab) clickRun() time.Duration {
	tb.t.Helper()
	tb.wait("Run enabled", `!document.querySelector('#run').disabled`, 30*time.Second)
	ms := eval[float64](tb, `new Promise((resolve, reject) => {
		const before = +(document.querySelector('#status')?.dataset.runs ?? 0);
		const done = () => { const s = document.querySelector('#status'); return s && +s.dataset.runs > before; };
		const t0 = performance.now();
		const obs = new MutationObserver(() => { if (done()) { obs.disconnect(); resolve(performance.now() - t0); } });
		obs.observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
		document.querySelector('#run').click();
		setTimeout(() => { obs.disconnect(); reject(new Error('no result within 120 s')); }, 120000);
	})`)
	return time.Duration(ms * float64(time.Millisecond))
}

// shot writes a full-page screenshot under build/screenshots/.
func (tb *tab) shot(name string) {
	tb.t.Helper()
	// let the last render and canvas blit reach the screen
	eval[chromedp.Void](tb, `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r())))`)
	buf, err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Fatal(err)
	}
	dir := filepath.Join(repoRoot, "build", "screenshots")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
		tb.t.Fatal(err)
	}
}
