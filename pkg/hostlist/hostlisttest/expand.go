// Package hostlisttest expands RFC 29 hostlists, the inverse of package
// hostlist's builder, for tests: they check that the hostlists the function
// writes name exactly the pods, in rank order, as Flux reads them. The
// function itself never expands a hostlist (it only writes them), so the
// expander is kept out of the binary; only test files import it.
//
// Expand refuses to produce more hosts than a caller-supplied limit, so
// that a fuzzed input cannot make a test allocate without bound.
package hostlisttest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrSyntax is wrapped by Expand's errors for text that is not a valid
// RFC 29 hostlist.
var ErrSyntax = errors.New("hostlist: syntax error")

// ErrLimit is wrapped by Expand's error when the list names more hosts than
// the caller allowed.
var ErrLimit = errors.New("hostlist: too many hosts")

// idRange is a parsed bracket item; width > 0 means zero padding to that
// many digits.
type idRange struct {
	lo, hi, width int
}

// expr is a parsed expression. A bare hostname has no ranges.
type expr struct {
	prefix, suffix string
	bracketed      bool
	ranges         []idRange
}

// Expand returns the hosts named by the RFC 29 hostlist s, in the order
// written. It returns an error (wrapping ErrLimit) rather than allocating
// when s names more than limit hosts; limit <= 0 disables that check and
// should only be used for trusted input.
//
// Errors report the 0-based byte offset of the problem.
func Expand(s string, limit int) ([]string, error) {
	exprs, err := parse(s)
	if err != nil {
		return nil, err
	}
	// Count first, so the limit is enforced before anything is allocated
	// and a huge range cannot overflow the total.
	total := 0
	for _, e := range exprs {
		n := 1
		if e.bracketed {
			n = 0
			for _, r := range e.ranges {
				c := r.hi - r.lo
				if c == maxInt || n > maxInt-c-1 {
					return nil, fmt.Errorf("%w: the host count overflows", ErrLimit)
				}
				n += c + 1
			}
		}
		if total > maxInt-n {
			return nil, fmt.Errorf("%w: the host count overflows", ErrLimit)
		}
		total += n
		if limit > 0 && total > limit {
			return nil, fmt.Errorf("%w: more than the limit of %d", ErrLimit, limit)
		}
	}
	hosts := make([]string, 0, total)
	var buf []byte
	for _, e := range exprs {
		if !e.bracketed {
			hosts = append(hosts, e.prefix)
			continue
		}
		for _, r := range e.ranges {
			for id := r.lo; ; id++ {
				buf = append(buf[:0], e.prefix...)
				buf = appendPadded(buf, id, r.width)
				buf = append(buf, e.suffix...)
				hosts = append(hosts, string(buf))
				if id == r.hi {
					break
				}
			}
		}
	}
	return hosts, nil
}

const maxInt = int(^uint(0) >> 1)

// appendPadded appends id in decimal, left-padded with zeros to width.
func appendPadded(b []byte, id, width int) []byte {
	var tmp [20]byte
	digits := strconv.AppendInt(tmp[:0], int64(id), 10)
	for i := len(digits); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, digits...)
}

// parse splits s into expressions and validates them completely before
// Expand does any counting or allocation.
func parse(s string) ([]expr, error) {
	if s == "" {
		return nil, nil
	}
	var exprs []expr
	start := 0
	for start <= len(s) {
		end, err := exprEnd(s, start)
		if err != nil {
			return nil, err
		}
		e, err := parseExpr(s, start, end)
		if err != nil {
			return nil, err
		}
		exprs = append(exprs, e)
		start = end + 1
	}
	return exprs, nil
}

// exprEnd returns the offset of the comma that ends the expression starting
// at start (or len(s)); commas inside brackets separate ids, not
// expressions.
func exprEnd(s string, start int) (int, error) {
	open := -1
	for i := start; i < len(s); i++ {
		switch s[i] {
		case '[':
			if open >= 0 {
				return 0, fmt.Errorf("%w: position %d: nested '[' (bracket opened at %d)", ErrSyntax, i, open)
			}
			open = i
		case ']':
			if open < 0 {
				return 0, fmt.Errorf("%w: position %d: ']' without '['", ErrSyntax, i)
			}
			open = -1
		case ',':
			if open < 0 {
				return i, nil
			}
		}
	}
	if open >= 0 {
		return 0, fmt.Errorf("%w: position %d: '[' is never closed", ErrSyntax, open)
	}
	return len(s), nil
}

// parseExpr parses s[start:end], which has balanced, unnested brackets.
func parseExpr(s string, start, end int) (expr, error) {
	if start == end {
		return expr{}, fmt.Errorf("%w: position %d: empty hostname", ErrSyntax, start)
	}
	open := strings.IndexByte(s[start:end], '[')
	if open < 0 {
		if err := checkName(s, start, end); err != nil {
			return expr{}, err
		}
		return expr{prefix: s[start:end]}, nil
	}
	open += start
	closing := open + strings.IndexByte(s[open:end], ']')
	if second := strings.IndexByte(s[closing:end], '['); second >= 0 {
		return expr{}, fmt.Errorf("%w: position %d: second bracket group in one expression (RFC 29 allows one; write one expression per group)", ErrSyntax, closing+second)
	}
	if err := checkName(s, start, open); err != nil {
		return expr{}, err
	}
	if err := checkName(s, closing+1, end); err != nil {
		return expr{}, err
	}
	ranges, err := parseIDList(s, open+1, closing)
	if err != nil {
		return expr{}, err
	}
	return expr{prefix: s[start:open], suffix: s[closing+1 : end], bracketed: true, ranges: ranges}, nil
}

// checkName rejects whitespace and control characters in a prefix, suffix
// or bare host: no hostname contains them, and accepting them would let a
// typo such as "a, b" expand to a host named " b" that no broker matches.
func checkName(s string, start, end int) error {
	for i := start; i < end; i++ {
		if c := s[i]; c <= ' ' || c == 0x7f {
			return fmt.Errorf("%w: position %d: invalid character %q in hostname", ErrSyntax, i, s[i:i+1])
		}
	}
	return nil
}

// parseIDList parses the comma-separated ids and ranges in s[start:end].
func parseIDList(s string, start, end int) ([]idRange, error) {
	if start == end {
		return nil, fmt.Errorf("%w: position %d: empty brackets", ErrSyntax, start-1)
	}
	var ranges []idRange
	for item := start; item <= end; {
		itemEnd := item + strings.IndexByte(s[item:end]+",", ',')
		r, err := parseItem(s, item, itemEnd)
		if err != nil {
			return nil, err
		}
		ranges = append(ranges, r)
		item = itemEnd + 1
	}
	return ranges, nil
}

// parseItem parses one `id` or `lo-hi` bracket item in s[start:end].
func parseItem(s string, start, end int) (idRange, error) {
	if start == end {
		return idRange{}, fmt.Errorf("%w: position %d: empty id in brackets", ErrSyntax, start)
	}
	dash := strings.IndexByte(s[start:end], '-')
	loEnd, hiStart := end, end
	if dash >= 0 {
		loEnd, hiStart = start+dash, start+dash+1
	}
	lo, err := parseID(s, start, loEnd)
	if err != nil {
		return idRange{}, err
	}
	hi := lo
	if dash >= 0 {
		if hi, err = parseID(s, hiStart, end); err != nil {
			return idRange{}, err
		}
		if hi < lo {
			return idRange{}, fmt.Errorf("%w: position %d: range %q ends below its start", ErrSyntax, start, s[start:end])
		}
	}
	width := 0
	if loEnd-start > 1 && s[start] == '0' {
		// RFC 29: a written leading zero asks for zero padding to the
		// width of the low bound.
		width = loEnd - start
	}
	return idRange{lo: lo, hi: hi, width: width}, nil
}

// parseID parses the decimal id s[start:end]. strconv alone would accept a
// sign, so digits are checked first.
func parseID(s string, start, end int) (int, error) {
	if start == end {
		return 0, fmt.Errorf("%w: position %d: missing id", ErrSyntax, start)
	}
	for i := start; i < end; i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%w: position %d: id %q is not a decimal number", ErrSyntax, start, s[start:end])
		}
	}
	n, err := strconv.Atoi(s[start:end])
	if err != nil {
		return 0, fmt.Errorf("%w: position %d: id %q: %w", ErrSyntax, start, s[start:end], err)
	}
	return n, nil
}
