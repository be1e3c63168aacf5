// Package hostlist builds RFC 29 hostlists, the notation Flux Framework
// uses for the broker's bootstrap hosts and resource tables.
//
// The builder exists because a JobSet can have a million pods: the broker
// config must list every one of them, in rank order, without the renderer
// ever holding one string per host. List therefore stores ranges, and its
// text form is as compact as RFC 29 allows with a single bracket group per
// expression (RFC 29 does not expand `a[0-1]-[0-3]` as a grid).
//
// Its inverse, an expander that checks what Flux reads back, is test code:
// package hostlisttest.
package hostlist

import (
	"fmt"
	"strconv"
	"strings"
)

// span is an inclusive id range.
type span struct {
	lo, hi int
}

// group is one `prefix[ids]suffix` expression. Its ranges are
// List.spans[first:] up to the next group's first, which keeps every range
// of the list in one backing array instead of one small slice per
// expression.
type group struct {
	prefix, suffix string
	first          int
}

// List is an ordered hostlist under construction. The zero value is an
// empty list ready for use. Memory grows with the number of ranges and
// expressions, never with the number of hosts.
type List struct {
	groups []group
	spans  []span
}

// AppendRange appends the hosts prefix+i+suffix for i = lo..hi, in
// increasing order, after the hosts already in the list. Ids are written
// in decimal without leading zeros because RFC 29 reads a leading zero as
// zero padding.
//
// When the previous expression has the same prefix and suffix the new ids
// go into its bracket (extending its last range when they are contiguous),
// which keeps the text short without changing the order of the hosts.
//
// AppendRange panics if lo < 0, hi < lo, or prefix or suffix contains '[',
// ']' or ','. These are programming errors (hostnames are DNS labels and
// never contain those characters), and emitting them would silently change
// how Flux splits the list, and therefore which pod gets which rank.
func (l *List) AppendRange(prefix string, lo, hi int, suffix string) {
	if lo < 0 || hi < lo {
		panic(fmt.Sprintf("hostlist: AppendRange(%q, %d, %d, %q): need 0 <= lo <= hi", prefix, lo, hi, suffix))
	}
	if strings.ContainsAny(prefix, "[],") || strings.ContainsAny(suffix, "[],") {
		panic(fmt.Sprintf("hostlist: AppendRange(%q, %d, %d, %q): prefix and suffix must not contain '[', ']' or ','", prefix, lo, hi, suffix))
	}
	if n := len(l.groups); n > 0 && l.groups[n-1].prefix == prefix && l.groups[n-1].suffix == suffix {
		if last := &l.spans[len(l.spans)-1]; last.hi == lo-1 {
			last.hi = hi
			return
		}
		l.spans = append(l.spans, span{lo, hi})
		return
	}
	l.groups = append(l.groups, group{prefix: prefix, suffix: suffix, first: len(l.spans)})
	l.spans = append(l.spans, span{lo, hi})
}

// String returns the RFC 29 text of the list, or "" for an empty list.
// An expression with a single host is written without brackets: `[5]` is
// legal but only adds noise to the generated config.
func (l *List) String() string {
	// Two passes (size, then write) so a large list costs one allocation
	// of exactly the text's size.
	var b strings.Builder
	b.Grow(l.write(nil))
	l.write(&b)
	return b.String()
}

// write writes the text to b, or only measures it when b is nil, and
// returns its length in bytes.
func (l *List) write(b *strings.Builder) int {
	n := 0
	str := func(s string) {
		n += len(s)
		if b != nil {
			b.WriteString(s)
		}
	}
	char := func(c byte) {
		n++
		if b != nil {
			b.WriteByte(c)
		}
	}
	var digits [20]byte
	id := func(v int) {
		d := strconv.AppendInt(digits[:0], int64(v), 10)
		n += len(d)
		if b != nil {
			b.Write(d)
		}
	}
	for gi, g := range l.groups {
		end := len(l.spans)
		if gi+1 < len(l.groups) {
			end = l.groups[gi+1].first
		}
		if gi > 0 {
			char(',')
		}
		str(g.prefix)
		ranges := l.spans[g.first:end]
		if len(ranges) == 1 && ranges[0].lo == ranges[0].hi {
			id(ranges[0].lo)
		} else {
			char('[')
			for i, r := range ranges {
				if i > 0 {
					char(',')
				}
				id(r.lo)
				if r.hi != r.lo {
					char('-')
					id(r.hi)
				}
			}
			char(']')
		}
		str(g.suffix)
	}
	return n
}
