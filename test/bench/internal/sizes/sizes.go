// Package sizes parses the benchmark's -sizes flag.
package sizes

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse reads a comma-separated list of positive item counts.
func Parse(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(strings.ReplaceAll(f, "_", ""))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number of resources", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no sizes")
	}
	return out, nil
}
