// Package bwrap runs one step's process under bubblewrap: a read-only view of
// the system directories (/usr, /etc, /bin, /sbin, /lib*; /etc/shadow and
// /etc/gshadow masked), the step's workspace bind-mounted read-write at its
// own path and used as the working and home folder, a private /tmp, a fresh
// /proc and /dev, new namespaces of every kind (the network too, unless the
// spec allows it), no capabilities, a new session, and a clean environment.
// Nothing else of the host filesystem is visible: not /home, /root, /var,
// /run, the ducklm data directory, the workspace's siblings or the host's
// /tmp.
//
// Where bubblewrap is missing or cannot build a sandbox here (Available
// tries once and says why), Run refuses with an EUNAVAILABLE error.
// RunUnsandboxed is the same runner with the same limits and no isolation,
// for the runtime to use only after a person approved the step.
//
// The package owns isolation and limits, nothing else: it runs exactly the
// spec it is given and never decides whether a step may run, may use the
// network, or may run unsandboxed; those are the router's and the runtime's
// decisions.
//
// Every process starts behind a gate (a shell blocked on a pipe) so that it
// is in its cgroup and under its rlimits before it runs anything. What is
// enforced where (Result.Enforced lists it per step):
//   - wall clock and output caps, both runners. On timeout, on cancel and
//     when the command exits, its process group is killed (and with it,
//     under bubblewrap, the sandbox's pid namespace, through
//     --die-with-parent) and so is its cgroup;
//   - CPU seconds (RLIMIT_CPU), largest file (RLIMIT_FSIZE), no core dumps:
//     rlimits, both runners, per process;
//   - processes: a pids cgroup where one can be made (a delegated cgroup v2
//     subtree with the pids controller, or a writable v1 pids hierarchy).
//     Inside a sandbox with its own user namespace, also RLIMIT_NPROC, set
//     once the namespace exists so that it counts only the sandbox's
//     processes. The kernel never applies RLIMIT_NPROC to root, so for root
//     only the cgroup bounds a fork bomb; without either, only the wall
//     clock ends it. Threads count as processes for both;
//   - memory: a memory cgroup where one can be made (all of the step's
//     processes together, swap included where the kernel accounts it),
//     otherwise RLIMIT_AS per process, which is cruder: runtimes that
//     reserve address space in bulk (V8, the JVM) fail under it early.
package bwrap
