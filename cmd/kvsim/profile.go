package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// profiler writes the --cpuprofile and --memprofile files of a predict run.
// The heap profile is the one taken when the live heap (after a forced
// collection, sampled from the run's progress callback) was largest, so its
// inuse_space says what the peak holds; its alloc_space counts what was
// allocated up to that point. A nil *profiler does nothing.
type profiler struct {
	cpu     *os.File
	memPath string
	peak    uint64
	heap    bytes.Buffer
	calls   int
}

func startProfiles(cpuPath, memPath string) (*profiler, error) {
	if cpuPath == "" && memPath == "" {
		return nil, nil
	}
	p := &profiler{memPath: memPath}
	if cpuPath != "" {
		f, err := os.Create(cpuPath)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, err
		}
		p.cpu = f
	}
	return p, nil
}

// sample takes a heap profile if the live heap is the largest seen so far.
func (p *profiler) sample() {
	if p == nil || p.memPath == "" {
		return
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapAlloc <= p.peak {
		return
	}
	p.peak = ms.HeapAlloc
	p.heap.Reset()
	_ = pprof.Lookup("heap").WriteTo(&p.heap, 0)
}

// progress wraps the run's progress callback so the heap is sampled as the
// run goes (next may be nil).
func (p *profiler) progress(next func(done, total int)) func(done, total int) {
	if p == nil || p.memPath == "" {
		return next
	}
	return func(done, total int) {
		p.sample()
		if next != nil {
			next(done, total)
		}
	}
}

// stop ends the CPU profile and writes the heap profile taken at the peak.
func (p *profiler) stop() error {
	if p == nil {
		return nil
	}
	if p.cpu != nil {
		pprof.StopCPUProfile()
		if err := p.cpu.Close(); err != nil {
			return err
		}
	}
	if p.memPath != "" {
		p.sample()
		if err := os.WriteFile(p.memPath, p.heap.Bytes(), 0o644); err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
	}
	return nil
}
