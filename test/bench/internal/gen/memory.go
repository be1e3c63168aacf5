package gen

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
)

// Inputs of the memory check: lists of one kind only, at sizes where a
// function that keeps the whole list (twice) runs out of memory.

// JobSetsName is the name of the list of n Flux JobSets.
func JobSetsName(n int) string { return fmt.Sprintf("jobsets-%d", n) }

// ConfigMapsName is the name of the list of n ConfigMaps.
func ConfigMapsName(n int) string { return fmt.Sprintf("configmaps-%d", n) }

// JobSets writes a ResourceList of n JobSets, every one annotated for
// Flux: the most output per input byte.
func JobSets(w io.Writer, n int, seed uint64) (*Manifest, error) {
	g := &writer{w: bufio.NewWriterSize(w, 1<<16), r: rand.New(rand.NewPCG(seed, seed^0x51ed270b27c3a4f9))}
	m := &Manifest{GeneratorVersion: Version, Name: JobSetsName(n), Seed: seed, Items: n}
	g.printf("%s%sitems:\n", header, functionConfig)
	for i := range n {
		groups, pods, gpu := g.jobSet(i, fmt.Sprintf("team-%02d", g.r.IntN(40)), true)
		m.FluxJobSets++
		m.FluxGroups += groups
		m.FluxPods += pods
		if gpu {
			m.GPUJobSets++
		}
	}
	return m, g.flush()
}

// ConfigMaps writes a ResourceList of n ConfigMaps of about 500 bytes
// each, which the function passes through: the cost of the list itself.
func ConfigMaps(w io.Writer, n int, seed uint64) (*Manifest, error) {
	g := &writer{w: bufio.NewWriterSize(w, 1<<16), r: rand.New(rand.NewPCG(seed, seed^0x2545f4914f6cdd1d))}
	m := &Manifest{GeneratorVersion: Version, Name: ConfigMapsName(n), Seed: seed, Items: n, ConfigMaps: n}
	g.printf("%s%sitems:\n", header, functionConfig)
	for i := range n {
		g.configMap(i, fmt.Sprintf("team-%02d", g.r.IntN(40)))
	}
	return m, g.flush()
}
