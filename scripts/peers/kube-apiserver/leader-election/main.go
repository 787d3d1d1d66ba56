// Command leader-election campaigns for a coordination.k8s.io/v1 Lease with client-go's own
// k8s.io/client-go/tools/leaderelection, so that the tests and bench/takeover.js can set the
// package's Lease elector beside the reference implementation against the same kube-apiserver.
// It prints one JSON line per callback (started, stopped, new-leader) and, on SIGTERM or SIGINT,
// cancels its context: the elector releases the Lease (ReleaseOnCancel) and the program exits.
// Built by scripts/build-peers.sh next to kube-apiserver.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

var printMu sync.Mutex

// emit writes one event as a JSON line on stdout.
func emit(event, identity string) {
	line, _ := json.Marshal(map[string]string{
		"event":    event,
		"identity": identity,
		"time":     time.Now().UTC().Format(time.RFC3339Nano),
	})
	printMu.Lock()
	defer printMu.Unlock()
	fmt.Println(string(line))
}

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "the kubeconfig file to reach the API server with")
	namespace := flag.String("namespace", "default", "the Lease's namespace")
	name := flag.String("name", "leader-election", "the Lease's name")
	identity := flag.String("identity", "", "this candidate's identity in the Lease (required)")
	leaseDuration := flag.Duration("lease-duration", 15*time.Second, "LeaseDuration")
	renewDeadline := flag.Duration("renew-deadline", 10*time.Second, "RenewDeadline")
	retryPeriod := flag.Duration("retry-period", 2*time.Second, "RetryPeriod")
	flag.Parse()
	if *identity == "" {
		fmt.Fprintln(os.Stderr, "leader-election: --identity is required")
		os.Exit(2)
	}

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "leader-election: kubeconfig: %v\n", err)
		os.Exit(1)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		fmt.Fprintf(os.Stderr, "leader-election: client: %v\n", err)
		os.Exit(1)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		cancel()
	}()

	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: *namespace, Name: *name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: *identity},
	}
	// RunOrDie returns once the context is cancelled, after releasing the Lease when this
	// candidate held it (ReleaseOnCancel).
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   *leaseDuration,
		RenewDeadline:   *renewDeadline,
		RetryPeriod:     *retryPeriod,
		ReleaseOnCancel: true,
		Name:            *name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { emit("started", *identity) },
			OnStoppedLeading: func() { emit("stopped", *identity) },
			OnNewLeader:      func(leader string) { emit("new-leader", leader) },
		},
	})
}
