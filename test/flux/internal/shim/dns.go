package shim

import (
	"fmt"
	"net"
	"os"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

// ServeDNS answers DNS queries on UDP addr (host:port) from records, which
// map fully qualified names (no trailing dot) to IPv4 addresses: A queries
// for a known name get its address, other types for a known name an empty
// answer, and unknown names NXDOMAIN. That is what cluster DNS answers for
// the pods of a headless Service, and it lets the resolver's search path
// (resolv.conf's "search <ns>.svc.<domain> ...") do the rest, as in a pod.
func ServeDNS(addr string, records map[string]string) error {
	conn, err := net.ListenPacket("udp4", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	fmt.Fprintf(os.Stderr, "serving %d names on %s\n", len(records), addr)
	known := make(map[string][4]byte, len(records))
	for name, ip := range records {
		v4 := net.ParseIP(ip).To4()
		if v4 == nil {
			return fmt.Errorf("record %s: %q is not an IPv4 address", name, ip)
		}
		known[strings.ToLower(strings.TrimSuffix(name, "."))+"."] = [4]byte(v4)
	}
	buf := make([]byte, 4096)
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			return err
		}
		reply, err := answer(buf[:n], known)
		if err != nil {
			continue // not a query we can parse: drop it, as a server would
		}
		if _, err := conn.WriteTo(reply, from); err != nil {
			return err
		}
	}
}

func answer(query []byte, known map[string][4]byte) ([]byte, error) {
	var p dnsmessage.Parser
	header, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	name := strings.ToLower(q.Name.String())
	ip, found := known[name]
	rcode := dnsmessage.RCodeSuccess
	if !found {
		rcode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{
		ID: header.ID, Response: true, Authoritative: true,
		RecursionDesired: header.RecursionDesired, RCode: rcode,
	})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	if found && q.Type == dnsmessage.TypeA && q.Class == dnsmessage.ClassINET {
		rh := dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 5}
		if err := b.AResource(rh, dnsmessage.AResource{A: ip}); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}
