// Command etcd is the etcd server used by the local mesh, built from the
// pinned go.etcd.io/etcd/server/v3 module. It is a module of its own so that
// etcd's dependencies never mix with the provider's or the API server's.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
