// Command dns-server stands in for the coredns image of the Gateway API conformance suite in the
// test pod runner (e2e/cluster/images.ts). It serves, over UDP and TCP on -port (53), what the
// suite's Corefile asks of zone foo.bar.com: coredns's whoami plugin, an A (or AAAA) record with
// the client's address. Every other name is REFUSED: the suite's catch-all zone forwards to public
// resolvers, which the sandboxed pod world must never reach. -conf is accepted and ignored.
package main

import (
	"flag"
	"log"
	"net"
	"strings"

	"github.com/miekg/dns"
)

const zone = "foo.bar.com."

func answer(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if len(req.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		_ = w.WriteMsg(m)
		return
	}
	q := req.Question[0]
	name := strings.ToLower(q.Name)
	if name != zone && !strings.HasSuffix(name, "."+zone) {
		m.Rcode = dns.RcodeRefused
		_ = w.WriteMsg(m)
		return
	}
	var ip net.IP
	switch a := w.RemoteAddr().(type) {
	case *net.UDPAddr:
		ip = a.IP
	case *net.TCPAddr:
		ip = a.IP
	}
	hdr := dns.RR_Header{Name: q.Name, Class: dns.ClassINET, Ttl: 0}
	if v4 := ip.To4(); v4 != nil {
		hdr.Rrtype = dns.TypeA
		m.Extra = append(m.Extra, &dns.A{Hdr: hdr, A: v4})
	} else if ip != nil {
		hdr.Rrtype = dns.TypeAAAA
		m.Extra = append(m.Extra, &dns.AAAA{Hdr: hdr, AAAA: ip})
	}
	log.Printf("%s %s from %s", dns.TypeToString[q.Qtype], q.Name, w.RemoteAddr())
	_ = w.WriteMsg(m)
}

func main() {
	port := flag.String("port", "53", "port to serve on")
	flag.String("conf", "", "Corefile (ignored; see the package comment)")
	flag.Parse()
	dns.HandleFunc(".", answer)
	errs := make(chan error, 2)
	for _, network := range []string{"udp", "tcp"} {
		srv := &dns.Server{Addr: ":" + *port, Net: network}
		go func() { errs <- srv.ListenAndServe() }()
	}
	log.Printf("dns-server: whoami for %s on port %s (udp, tcp)", zone, *port)
	log.Fatal(<-errs)
}
