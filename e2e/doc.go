// Package e2e holds gpuprof's end-to-end tests: the real gpuprof binary,
// driven by a real single-node Slurm (contrib/slurm/testcluster.sh) whose
// four GPUs are fake device files backed by the simulated GPU node, and by
// real munge for the collector's authentication.
//
// It has no code of its own and must not be imported. The Slurm tests need
// root (Slurm daemons, device files), the collector tests munged and root
// (to create Unix users); the jobcomp lock test needs neither. They skip
// where they cannot run (not root, Slurm not installable), except when
// CI=true, where that is a failure. Set
// GPUPROF_BIN to test a prebuilt binary; otherwise the tests build
// ./cmd/gpuprof once per run.
//
// # One shared cluster
//
// One accounting cluster (slurmdbd and MariaDB, jobcomp, the hooks handed
// out by partition: testcluster.sh --by-partition) starts once per go test
// run, when the first test asks for it (sharedCluster or wholeNode), and
// stops when TestMain ends. Each test on it gets a scope: a partition and
// an account of its own (and more partitions of its own if it needs them,
// scope.addPartition), under which it submits every job, and those
// partitions' hooks run the test's gpuprof with the test's configuration.
// Such a test waits on its own jobs (its partition's queue, its job ids,
// sacct states, log lines), reads sacct for its own ids, and imports its
// own account only (scope.importOwnAccount). On it, sharing the node
// (sharedCluster): TestSlurmFacts, TestSqueueGresPerNode,
// TestJobIDsAsSlurmPrintsThem, TestHookCrashOnCluster,
// TestRunningJobShownWhileItRuns, TestRunningJobNameElapsedClass,
// TestSpooledRecordsJoinTheirJob, TestSMActivityUnderSlurm,
// TestClusterDatabaseTmpdir, TestJobEndMailAndAdminComment (its jobs'
// mail too goes to its partition's wrapper: slurmctld gives MailProg
// SLURM_JOB_PARTITION, as its other scripts), TestPrometheusScrape
// (sequential, so alone on it; the cluster starts for it when it runs
// first).
//
// On it too, with no scope and no lease, since they submit nothing and
// read only its configuration (sharedConf): TestSchedConfAsSlurmReadsIt
// and TestLiveSlurmSource compare slurm.conf with slurmctld's view of it.
// The partitions the scopes make at run time (scopeMade) are slurmctld's
// and in no file: they leave those out.
//
// On it too, with the node to themselves (wholeNode) for as long as they
// need it: TestNeverStartedRealJobs and TestNoticesUnderSlurm (they hold
// all four GPUs at once, which would stall every test beside them),
// TestCaptureUnderSlurm (Slurm places the shard jobs first-fit on one GPU
// only with the node's GPUs free), TestForeignProcessesCannotClaimJobs
// (the victim must get GPU 0, not one of the GPUs user A's look-alike
// programs sit on: on a node other tests share, Slurm gives a one-GPU job
// whichever GPU they left free), TestWhatIfReplaysRealQueue and
// TestWhatIfSaysWhatItDoesNotReproduce (the replay sees only the jobs
// they import, so another test's jobs on the node would be waits it cannot
// explain; the latter drains the node for 65 s; the former asks for the
// node only once the shared slurmctld's first backfill cycle is past,
// waitFirstBackfill, since a replay cannot know when slurmctld started
// and a fresh one backfills nothing for bf_interval: that matters when it
// runs alone). Their jobs are the only
// ones on the node while they hold it alone, and those of their scope.
// The what-if tests and TestNeverStartedRealJobs (which replays its jobs
// too) submit to partition gpu, slurm.conf's, since gpuprof whatif builds
// the cluster it replays from slurm.conf and leaves out jobs of other
// partitions; they take it into their scope while they hold the node
// (scope.confPartition: its wrappers are theirs, its jobs cancelled when
// they give the node back) and submit under their own account, the one
// they import.
//
// A whole-node test gives the node back as soon as it no longer needs it
// alone. Notices (once phase 2's jobs and the dry run's are placed, phase
// 1's four having run together), capture (once its shards are placed, on
// one GPU) and the foreign-process test (once the victim has GPU 0) share
// it (scope.share): their jobs run on, scoped tests come in beside them,
// and what they check from then on is their own agents', simulated GPUs'
// and jobs': other tests' jobs on the other GPUs change none of it. The
// two what-if tests and the foreign-process test end their scope
// (scope.end) once their jobs have left the queue: what follows reads
// sacct of their own account, or their own agent, not the node.
//
// # The node's lease
//
// The shared cluster's node has a lease (shared.node, a nodeLease): a
// scoped test holds it shared from sharedCluster to its end, a whole-node
// test alone from wholeNode until it shares it or ends. A whole-node test
// gets it once no test holds it, in the order wholeNodeOrder gives the
// waiting ones (those that share it early first, those that keep it alone
// to their end last, so that no scoped test is left to wait after them);
// while one waits, scoped tests wait too, so the whole-node tests run one
// after another, each as soon as the previous one and the scoped tests
// beside it are done; but while a whole-node test has shared the node,
// scoped tests come in beside it though others wait. At most scopedAtOnce scoped tests hold it at once
// (beside a whole-node test's jobs, more would queue for GPUs past their
// waits). Having the lease, wholeNode waits until squeue lists no job at
// all, since a scope's cancelled jobs may still be completing when it is
// given back. A scope's partition, account and association are made before
// its lease is taken (that changes nothing on the node), and the lease is
// given back last, after the scope's partitions are removed and with them
// its jobs.
//
// go test runs a parallel test in one of -parallel slots, and a test
// waiting for the lease waits in its slot. This cannot deadlock because:
//   - The lease is taken after t.Parallel, never before: before it a test
//     runs in go test's sequential phase, and a whole-node test holding
//     the lease there would pause in t.Parallel until that phase ends,
//     while a second whole-node test, or TestPrometheusScrape (sequential
//     and scoped), waited in that same phase for the lease.
//   - Sequential tests (TestPrometheusScrape) take the lease only in the
//     sequential phase, when no parallel test has started: nobody else
//     holds it or waits for it.
//   - A holder waits for nothing but its own jobs and processes, so it
//     ends and frees the lease, whoever waits in the other slots. That is
//     why a test holding the lease must take it once and must have no
//     parallel subtests (they would need slots that tests waiting for the
//     lease may all hold).
//
// Tests waiting for the lease use no CPU, and they must not keep the tests
// with a cluster of their own (the long what-if runs among them) out of
// go test's slots: before, with four slots and one more per whole-node
// test, the counterfactual's two runs got slots nine minutes into the run.
// So TestMain gives the package parallelSlots, enough for every parallel
// test at once, and what bounds the work is the lease on the shared
// cluster and, for the others, ownClusters: startCluster waits for one of
// clusterTestsAtOnce tokens. A token holder waits for nothing else.
//
// The others start a cluster of their own (startCluster), because:
//   - TestConfiglessNode: slurmd runs configless (another start-up, another
//     slurm.conf path for the hooks).
//   - TestWhatIfCounterfactual, TestWhatIfFidelityMultifactor: their own
//     node size (8 and 6 GPUs) and a multifactor slurm.conf; the replay
//     they check must see the node's whole queue.
//   - TestRecommendationsAcceptedBySlurm: applies partition and QOS changes
//     to slurmctld, for every job on it.
//   - TestSchedulerViewMatchesSacct: its jobs hold the node's GPUs for
//     minutes (a job run to its time limit, one cancelled, one requeued,
//     an array); on the shared node they kept a scoped test's job pending
//     past its wait (TestHookCrashOnCluster/kill, one run of six). Its
//     requeue now waits until the first run's script has started, which
//     ended the double launch ("slurm_script: File exists") that first
//     sent it back.
//
// # Two tiers
//
// The smoke tier — capture, the controller's records, job ids, the TUI,
// hook crashes, security — is the Makefile's E2E_SMOKE, a go test -run
// pattern: `make test-smoke` runs it for every change. `make test-full`
// (which is `make test`, what CI runs) runs every test. No test skips
// itself for a tier; TestSmokeTierNamesTests keeps E2E_SMOKE's names true.
//
// The tests mostly wait on sleeping jobs, so they run in parallel: four own
// clusters at a time, the shared cluster's tests as its lease lets them,
// unless go test is given -parallel (its default, GOMAXPROCS, is 2 on a
// 2-core machine); testcluster.sh keeps the own clusters' ports,
// directories and slurmstepds apart. The tests that measure wall-clock
// time (TestJobCompDeadlineWithLockedDB, TestPrometheusScrape) are
// sequential: go test runs them first, with no other test of this package
// beside them.
package e2e
