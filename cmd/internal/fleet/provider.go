package fleet

import (
	"fmt"

	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/automanaged"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/k8s"
)

// automanagedProvider is protoactor's automanaged membership: this node
// serves its entry on AutoManagePort (every interface) and polls every
// seed's each Refresh. protoactor only logs a port it cannot bind, so
// the port is tried first, for a clear error.
func automanagedProvider(cfg Config) (cluster.ClusterProvider, error) {
	if err := portFree(cfg.AutoManagePort); err != nil {
		return nil, fmt.Errorf("%w: the automanaged port %d: %v (choose a free one with --cluster-automanaged-port)", ErrStart, cfg.AutoManagePort, err)
	}
	return automanaged.NewWithConfig(cfg.Refresh, cfg.AutoManagePort, cfg.Seeds...), nil
}

// kubernetesProvider is protoactor's Kubernetes membership, from the
// pod's in-cluster config (its service account's token and the API
// server's address in the environment).
func kubernetesProvider() (cluster.ClusterProvider, error) {
	p, err := k8s.New()
	if err != nil {
		return nil, fmt.Errorf("%w: the kubernetes membership: %v (it runs in a pod, with a service account allowed to get, watch and patch pods in its namespace)", ErrStart, err)
	}
	return p, nil
}
