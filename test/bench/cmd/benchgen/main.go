// Command benchgen writes the jobset-flux benchmark's inputs into a cache
// directory: an empty ResourceList, mixes of N resources (about 10% JobSets
// annotated for Flux) and three 10,000-pod JobSets. Inputs are
// deterministic for a seed and rewritten only when missing or stale.
//
//	benchgen [-dir _out/bench] [-seed 1] [-sizes 1000,10000,50000]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/jobset-flux/jobset-flux/test/bench/internal/gen"
	"github.com/jobset-flux/jobset-flux/test/bench/internal/sizes"
)

func main() {
	dir := flag.String("dir", "_out/bench", "cache directory for the inputs")
	seed := flag.Uint64("seed", 1, "random seed of the mixes")
	list := flag.String("sizes", "1000,10000,50000", "comma-separated numbers of resources")
	flag.Parse()
	ns, err := sizes.Parse(*list)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchgen: -sizes: %v\n", err)
		os.Exit(2)
	}
	if _, err := gen.EnsureAll(*dir, ns, *seed, func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "benchgen: "+format+"\n", args...)
	}); err != nil {
		fmt.Fprintf(os.Stderr, "benchgen: %v\n", err)
		os.Exit(1)
	}
}
