package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MaxInputEnv sets the input limit where no flag can be given (kustomize
// and kpt run a container function without arguments, but pass it an
// environment).
const MaxInputEnv = "JOBSET_FLUX_MAX_INPUT"

// defaultMaxInput bounds stdin and each input file: a ResourceList far
// larger than a repository renders at once (docs/contributing/performance.md), and a
// bound on what a runaway producer
// (a generator looping, /dev/zero) can make the function hold.
const defaultMaxInput = 256 << 20

// maxInputHint says how to raise the limit, in the error that names it.
const maxInputHint = "raise it with --max-input or " + MaxInputEnv + " (e.g. 512Mi)"

// inputLimit is the --max-input flag's value, else MaxInputEnv's, else
// the default.
func inputLimit(flagValue string) (int64, error) {
	if flagValue != "" {
		n, err := parseSize(flagValue)
		if err != nil {
			return 0, fmt.Errorf("--max-input: %w", err)
		}
		return n, nil
	}
	if v, ok := os.LookupEnv(MaxInputEnv); ok && v != "" {
		n, err := parseSize(v)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", MaxInputEnv, err)
		}
		return n, nil
	}
	return defaultMaxInput, nil
}

// sizeUnits are the suffixes parseSize reads, as Kubernetes quantities
// write them.
var sizeUnits = []struct {
	suffix string
	factor int64
}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}}

// parseSize reads a byte count: digits, optionally followed by Ki, Mi
// or Gi.
func parseSize(s string) (int64, error) {
	digits, factor := s, int64(1)
	for _, u := range sizeUnits {
		if d, ok := strings.CutSuffix(s, u.suffix); ok {
			digits, factor = d, u.factor
			break
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 1 || digits != strings.TrimSpace(digits) || strings.HasPrefix(digits, "+") || n > (1<<40)/factor {
		return 0, fmt.Errorf("%q is not a size; write a whole number of bytes from 1 to 1Ti, optionally with Ki, Mi or Gi (e.g. 512Mi)", s)
	}
	return n * factor, nil
}
