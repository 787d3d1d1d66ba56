'use strict';
// The real Kubernetes control plane the benchmarks start (etcd and kube-apiserver on loopback, RBAC on,
// built by `bash scripts/build-peers.sh etcd kube-apiserver`): the tests' own, scripts/control-plane.js.
module.exports = require('../scripts/control-plane');
