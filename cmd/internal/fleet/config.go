package fleet

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/cluster"
	"github.com/rs/zerolog"
)

// The membership providers Config.Provider names.
const (
	// ProviderAutomanaged is protoactor's automanaged provider: every node
	// serves its member entry over HTTP on AutoManagePort (all
	// interfaces) and polls every seed's; no external service.
	ProviderAutomanaged = "automanaged"
	// ProviderKubernetes is protoactor's Kubernetes provider: each pod
	// labels itself through the API server and watches the others'
	// labels (in-cluster config; RBAC to get, watch and patch pods).
	ProviderKubernetes = "kubernetes"
)

// Config is a node's place in the fleet.
type Config struct {
	// Node is this node's name in the operator API; it must be the
	// server's (serve.Config.Node). Default: the server's.
	Node string
	// Cluster names the cluster: members of another name are not seen.
	// Default "brisvox".
	Cluster string
	// Addr is the HOST:PORT the node's remote (gRPC) listens on for the
	// other nodes: 127.0.0.1:0 in tests, 0.0.0.0:PORT or the pod's
	// address in a deployment. Required. It carries no authentication:
	// only the fleet's nodes may reach it.
	Addr string
	// Advertise is the HOST:PORT the other nodes reach this one at, when
	// Addr is not it (Addr on 0.0.0.0). Default: the address Addr bound.
	Advertise string
	// Provider is the membership: ProviderAutomanaged or
	// ProviderKubernetes. Default automanaged; empty with WithProvider.
	Provider string
	// Seeds (automanaged) are every node's automanaged HOST:PORT, this
	// one's included.
	Seeds []string
	// AutoManagePort (automanaged) is the port this node's member entry
	// is served on, on every interface (protoactor binds it so). Default
	// 6330.
	AutoManagePort int
	// Refresh is how often the other members are asked for their calls.
	// Default 500 ms.
	Refresh time.Duration
	// DropAfter is how long a member may go without answering before its
	// calls leave the view (a node killed, cut off). Default 4 × Refresh.
	DropAfter time.Duration
	// Workers bounds the commands the operator actor carries out at once
	// (each on a goroutine of its own, up to serve's 5 s); more are
	// answered as refused. Default 32.
	Workers int
	Log     zerolog.Logger
}

// Defaults of Config.
const (
	DefaultCluster        = "brisvox"
	DefaultRefresh        = 500 * time.Millisecond
	DefaultAutoManagePort = 6330
	DefaultWorkers        = 32
)

func (c Config) withDefaults(o options) Config {
	if c.Provider == "" && o.provider == nil {
		c.Provider = ProviderAutomanaged
	}
	if c.Cluster == "" {
		c.Cluster = DefaultCluster
	}
	if c.AutoManagePort == 0 {
		c.AutoManagePort = DefaultAutoManagePort
	}
	if c.Refresh == 0 {
		c.Refresh = DefaultRefresh
	}
	if c.DropAfter == 0 {
		c.DropAfter = 4 * c.Refresh
	}
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	return c
}

// Validate checks a config, its defaults filled in, for a membership of
// Config.Provider's (New checks it again with its options).
func (c Config) Validate() error { return c.withDefaults(options{}).validate(options{}) }

func (c Config) validate(o options) error {
	if o.provider != nil && (c.Provider != "" || len(c.Seeds) > 0) {
		return fmt.Errorf("%w: WithProvider gives the membership: no provider name or seeds with it", ErrInvalidConfig)
	}
	if c.Node == "" {
		return fmt.Errorf("%w: no node name", ErrInvalidConfig)
	}
	if _, _, err := hostPort(c.Addr); err != nil {
		return fmt.Errorf("%w: cluster address %q: %v (want HOST:PORT, e.g. 127.0.0.1:7070)", ErrInvalidConfig, c.Addr, err)
	}
	if c.Advertise != "" {
		host, port, err := hostPort(c.Advertise)
		if err != nil {
			return fmt.Errorf("%w: advertised address %q: %v (want HOST:PORT the other nodes reach)", ErrInvalidConfig, c.Advertise, err)
		}
		if port == 0 || host == "" || net.ParseIP(host).IsUnspecified() {
			return fmt.Errorf("%w: advertised address %q: want a host and port the other nodes can dial", ErrInvalidConfig, c.Advertise)
		}
	}
	switch {
	case c.Refresh < 10*time.Millisecond:
		return fmt.Errorf("%w: refresh %v: want at least 10ms", ErrInvalidConfig, c.Refresh)
	case c.DropAfter < c.Refresh:
		return fmt.Errorf("%w: drop after %v: want at least the refresh (%v)", ErrInvalidConfig, c.DropAfter, c.Refresh)
	case c.Workers < 1:
		return fmt.Errorf("%w: workers %d: want at least 1", ErrInvalidConfig, c.Workers)
	}
	switch {
	case o.provider != nil:
	case c.Provider == ProviderAutomanaged:
		if len(c.Seeds) == 0 {
			return fmt.Errorf("%w: the automanaged membership needs seeds: every node's HOST:PORT of its automanaged port, this one's included", ErrInvalidConfig)
		}
		for _, s := range c.Seeds {
			host, port, err := hostPort(s)
			if err != nil || host == "" || port == 0 {
				return fmt.Errorf("%w: seed %q: want HOST:PORT", ErrInvalidConfig, s)
			}
		}
		if c.AutoManagePort < 1 || c.AutoManagePort > 65535 {
			return fmt.Errorf("%w: automanaged port %d: want 1-65535", ErrInvalidConfig, c.AutoManagePort)
		}
	case c.Provider == ProviderKubernetes:
		if len(c.Seeds) > 0 {
			return fmt.Errorf("%w: seeds are for the automanaged membership; the kubernetes one finds the pods itself", ErrInvalidConfig)
		}
	default:
		return fmt.Errorf("%w: membership provider %q: want %s or %s", ErrInvalidConfig, c.Provider, ProviderAutomanaged, ProviderKubernetes)
	}
	return nil
}

// hostPort splits HOST:PORT; the host may be empty (all interfaces).
func hostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("port %q: want 0-65535", p)
	}
	return host, port, nil
}

// Option adds what a Config cannot carry.
type Option func(*options)

type options struct {
	provider cluster.ClusterProvider
}

// WithProvider gives the node a membership provider of the caller's
// making, in place of Config.Provider's: the tests' in-process one
// (protoactor's cluster/clusterproviders/test, which no production
// binary links). A provider serves one Start.
func WithProvider(p cluster.ClusterProvider) Option {
	return func(o *options) { o.provider = p }
}
