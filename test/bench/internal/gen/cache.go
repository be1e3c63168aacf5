package gen

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Input is one cached input file and its manifest.
type Input struct {
	Path     string
	Manifest *Manifest
}

// Ensure returns the input name in dir, (re)writing it with write when it
// is missing or was made by another generator version or seed.
func Ensure(dir, name string, seed uint64, write func(io.Writer) (*Manifest, error)) (Input, bool, error) {
	in := Input{Path: filepath.Join(dir, name+".yaml")}
	manifestPath := filepath.Join(dir, name+".json")
	if m, err := Load(manifestPath); err == nil && m.GeneratorVersion == Version && m.Seed == seed {
		if st, err := os.Stat(in.Path); err == nil && st.Size() == m.Bytes {
			in.Manifest = m
			return in, false, nil
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return in, false, err
	}
	tmp := in.Path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return in, false, err
	}
	m, err := write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return in, false, fmt.Errorf("writing %s: %w", tmp, err)
	}
	st, err := os.Stat(tmp)
	if err != nil {
		return in, false, err
	}
	m.Bytes, m.Seed = st.Size(), seed
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return in, false, err
	}
	if err := os.Rename(tmp, in.Path); err != nil {
		return in, false, err
	}
	if err := os.WriteFile(manifestPath, append(data, '\n'), 0o644); err != nil {
		return in, false, err
	}
	in.Manifest = m
	return in, true, nil
}

// Load reads a manifest.
func Load(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}

// Set is every input of one benchmark run.
type Set struct {
	Empty  Input
	Mixes  []Input
	Shapes []Input
}

// EnsureAll makes sure every input exists in dir, writing only those
// that are missing or stale; log is told about each one written.
func EnsureAll(dir string, sizes []int, seed uint64, log func(format string, args ...any)) (*Set, error) {
	var set Set
	note := func(in Input, wrote bool) {
		if wrote && log != nil {
			log("generated %s (%d items, %.1f MiB, %d Flux JobSets)", in.Path, in.Manifest.Items, float64(in.Manifest.Bytes)/(1<<20), in.Manifest.FluxJobSets)
		}
	}
	in, wrote, err := Ensure(dir, EmptyName, seed, Empty)
	if err != nil {
		return nil, err
	}
	note(in, wrote)
	set.Empty = in
	for _, n := range sizes {
		in, wrote, err := Ensure(dir, MixName(n), seed, func(w io.Writer) (*Manifest, error) { return Mix(w, n, seed) })
		if err != nil {
			return nil, err
		}
		note(in, wrote)
		set.Mixes = append(set.Mixes, in)
	}
	for _, s := range Shapes10k {
		in, wrote, err := Ensure(dir, ShapeName(s), seed, func(w io.Writer) (*Manifest, error) { return OneJobSet(w, s) })
		if err != nil {
			return nil, err
		}
		note(in, wrote)
		set.Shapes = append(set.Shapes, in)
	}
	return &set, nil
}
