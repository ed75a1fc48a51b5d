package replay

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/trace"
)

// Workloads shares built workloads between the jobs of a sweep or a
// compare. A trace.Workload is immutable once built and may be reused
// across runs, and such jobs usually vary only the engine, so most of them
// need the same one: building it once saves parsing the trace per job
// (about half of a small run's allocations, and the trace's memory once
// instead of per job). It is safe for concurrent use.
//
// The key holds everything Workload reads, and more: the config's
// directory, the whole traffic block and every role's block size, so that
// a job never gets the workload of a different config (at worst it builds
// its own). At most maxWorkloads are kept; further ones are built per job.
// Trace bytes are read once per path and kept for the cache's life, so a
// cache serves one set of traces: make a new one when they change.
type Workloads struct {
	mu    sync.Mutex
	m     map[string]*cachedWorkload
	files map[string]*cachedFile
}

type cachedWorkload struct {
	once sync.Once
	wl   *trace.Workload
	err  error
}

type cachedFile struct {
	once sync.Once
	data []byte
	err  error
}

const maxWorkloads = 8

// NewWorkloads returns an empty cache.
func NewWorkloads() *Workloads {
	return &Workloads{m: map[string]*cachedWorkload{}, files: map[string]*cachedFile{}}
}

// get returns cfg's workload; a nil *Workloads builds it every time.
func (c *Workloads) get(cfg *config.Config, open Opener) (*trace.Workload, error) {
	if c == nil {
		return Workload(cfg, open)
	}
	open = c.cached(open)
	key, err := json.Marshal(struct {
		Dir        string
		Traffic    config.Traffic
		BlockSizes []int
	}{cfg.Dir, cfg.Traffic, blockSizes(cfg)})
	if err != nil {
		return Workload(cfg, open)
	}
	c.mu.Lock()
	w, ok := c.m[string(key)]
	if !ok && len(c.m) < maxWorkloads {
		w = &cachedWorkload{}
		c.m[string(key)] = w
	}
	c.mu.Unlock()
	if w == nil {
		return Workload(cfg, open)
	}
	w.once.Do(func() { w.wl, w.err = Workload(cfg, open) })
	return w.wl, w.err
}

func blockSizes(cfg *config.Config) []int {
	var bs []int
	for _, r := range cfg.Roles() {
		bs = append(bs, r.KVCache.BlockSize)
	}
	return bs
}

// cached wraps open so that each path is read once and served from
// memory to every job (jobs run concurrently and would otherwise each read
// the trace again).
func (c *Workloads) cached(open Opener) Opener {
	return func(path string) (io.ReadCloser, error) {
		c.mu.Lock()
		e := c.files[path]
		if e == nil {
			e = &cachedFile{}
			c.files[path] = e
		}
		c.mu.Unlock()
		e.once.Do(func() {
			f, err := open(path)
			if err != nil {
				e.err = err
				return
			}
			defer f.Close()
			e.data, e.err = io.ReadAll(f)
		})
		if e.err != nil {
			return nil, e.err
		}
		return memFile{bytes.NewReader(e.data)}, nil
	}
}
