package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/brisvox/brisvox/cmd/internal/fleet"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/rs/zerolog"
)

// fleetFlags are `brisvox serve`'s options for joining a fleet
// (cmd/internal/fleet, docs/OPERATIONS.md): with --cluster-addr the
// node's operator API lists and commands the calls of every node.
type fleetFlags struct {
	node      string
	addr      string
	advertise string
	name      string
	provider  string
	seeds     string
	autoPort  int
}

// register adds the fleet's flags to fs.
func (f *fleetFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.node, "node", "", "this node's name in the operator API and the fleet (default: the host's name); unique in the fleet")
	fs.StringVar(&f.addr, "cluster-addr", "", "join the fleet: the HOST:PORT this node's cluster port (protoactor remote, gRPC, no authentication: a private network only) listens on; unset: the node is alone")
	fs.StringVar(&f.advertise, "cluster-advertise", "", "the HOST:PORT the other nodes reach this one at, when --cluster-addr is 0.0.0.0:PORT (a pod's IP)")
	fs.StringVar(&f.name, "cluster-name", fleet.DefaultCluster, "the fleet's name: nodes of another name are not members")
	fs.StringVar(&f.provider, "cluster-provider", fleet.ProviderAutomanaged, "how the nodes find each other: automanaged (every node polls --seeds) or kubernetes (the pods, through the API server)")
	fs.StringVar(&f.seeds, "seeds", "", "automanaged: every node's HOST:PORT of its --cluster-automanaged-port, comma-separated, this node's included")
	fs.IntVar(&f.autoPort, "cluster-automanaged-port", fleet.DefaultAutoManagePort, "automanaged: the port this node serves its member entry on (every interface)")
}

// nodeNames are the names a node may have: they are a path segment of
// the operator API (/operator/nodes/NAME/drain).
var nodeNames = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// nodeName is --node, or the host's name as serve would default it.
func (f fleetFlags) nodeName() string {
	if f.node != "" {
		return f.node
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "brisvox"
}

// check says what is wrong with the fleet's flags, before anything
// starts; operator says whether the operator API is on, node is the
// node's name.
func (f fleetFlags) check(operator bool, node string) error {
	if !nodeNames.MatchString(node) {
		return fmt.Errorf("--node: %q: want letters, digits, '.', '_' or '-' (at most 63), e.g. brisvox-1", node)
	}
	if f.addr == "" {
		for name, set := range map[string]bool{"--cluster-advertise": f.advertise != "", "--seeds": f.seeds != ""} {
			if set {
				return fmt.Errorf("%s needs --cluster-addr (the node joins no fleet without it)", name)
			}
		}
		return nil
	}
	if !operator {
		return fmt.Errorf("--cluster-addr: the fleet carries the operator API's commands: give --operator-token-env too")
	}
	c := f.config(node, zerolog.Nop())
	return c.Validate()
}

// config is the fleet's Config from the flags.
func (f fleetFlags) config(node string, log zerolog.Logger) fleet.Config {
	c := fleet.Config{
		Node: node, Cluster: f.name, Addr: f.addr, Advertise: f.advertise,
		Provider: f.provider, AutoManagePort: f.autoPort, Log: log,
	}
	for s := range strings.SplitSeq(f.seeds, ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.Seeds = append(c.Seeds, s)
		}
	}
	return c
}

// startFleet joins srv to the fleet the flags name (nil, nil when they
// name none); Stop it after srv.Serve returned, so the node's drain is
// seen from the others to its end.
func (f fleetFlags) startFleet(srv *serve.Server, log zerolog.Logger, stdout io.Writer) (*fleet.Fleet, error) {
	if f.addr == "" {
		return nil, nil
	}
	fl, err := fleet.New(f.config(srv.Node().Node, log), srv)
	if err != nil {
		return nil, err
	}
	if err := fl.Start(); err != nil {
		return nil, err
	}
	srv.JoinFleet(fl)
	fmt.Fprintf(stdout, "brisvox: node %q in fleet %q, cluster port %s (%s membership)\n", srv.Node().Node, f.name, fl.Address(), f.provider)
	return fl, nil
}
