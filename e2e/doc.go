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
// run, when the first test asks for it (sharedCluster), and stops when
// TestMain ends. Each test on it gets a scope: a partition and an account
// of its own, under which it submits every job, and that partition's hooks
// run the test's gpuprof with the test's configuration. Such a test waits
// on its own jobs (its partition's queue, its job ids, sacct states, log
// lines), reads sacct for its own ids, and imports its own account only
// (scope.importOwnAccount). On it: TestSlurmFacts,
// TestSqueueGresPerNode, TestJobIDsAsSlurmPrintsThem,
// TestHookCrashOnCluster, TestRunningJobShownWhileItRuns,
// TestRunningJobNameElapsedClass, TestSpooledRecordsJoinTheirJob,
// TestSMActivityUnderSlurm, TestPrometheusScrape (sequential, so alone on
// it; the cluster starts for it when it runs first).
//
// The others start a cluster of their own (startCluster), because:
//   - TestConfiglessNode: slurmd runs configless (another start-up, another
//     slurm.conf path for the hooks).
//   - TestWhatIfCounterfactual, TestWhatIfFidelityMultifactor: their own
//     node size (8 and 6 GPUs) and a multifactor slurm.conf; the replay
//     they check must see the node's whole queue.
//   - TestWhatIfReplaysRealQueue, TestWhatIfSaysWhatItDoesNotReproduce:
//     they replay the node's whole queue; another test's jobs on the node
//     would be waits the replay cannot see.
//   - TestNeverStartedRealJobs: holds all four GPUs to keep jobs pending,
//     which would stall every test beside it.
//   - TestSchedConfAsSlurmReadsIt, TestLiveSlurmSource: compare slurm.conf's
//     partitions with slurmctld's; the shared cluster's partitions are made
//     at run time and in no file.
//   - TestRecommendationsAcceptedBySlurm: applies partition and QOS changes
//     to slurmctld, for every job on it.
//   - TestJobEndMailAndAdminComment: MailProg (job mail carries no
//     partition to hand it out by).
//   - TestSchedulerViewMatchesSacct: it requeues a running job and pushes
//     its begin time to now until it runs again; on the shared cluster,
//     with other tests' jobs beside it under load, slurmctld sent the
//     requeued job's launch twice (slurmd: "slurm_script: File exists",
//     launch failed, requeued held) in three runs of five.
//   - TestCaptureUnderSlurm: checks that Slurm places the shard jobs
//     first-fit on one GPU, which holds only with the node's GPUs free.
//   - TestNoticesUnderSlurm: its first phase holds all four GPUs at once
//     for 50–80 s (four one-GPU jobs that sleep or burn that long; two
//     more queue behind them). Tests beside it wait at most a minute for
//     a job to start or leave the queue. Tried on the shared cluster (its
//     exempt and cancel partitions the scope's own), it passed, and
//     TestHookCrashOnCluster ("after 1m0s, jobs still queued") and
//     TestSpooledRecordsJoinTheirJob (no spooled prolog record after a
//     minute) failed behind it, as behind TestNeverStartedRealJobs.
//   - TestForeignProcessesCannotClaimJobs: user A's look-alike programs
//     sit on GPUs 2 and 3, which on its own cluster the victim, the first
//     job, never gets (GPU 0). On the shared cluster Slurm gives a
//     one-GPU job whichever GPU other tests left free (seen: GPU 3 while
//     0–2 were held), and a foreign process on the victim's GPU makes the
//     agent attribute per process and mark the readings shared
//     (agent/sample.go), which the test rightly refuses: it would pass or
//     fail by placement.
//
// # Two tiers
//
// The smoke tier — capture, the controller's records, job ids, the TUI,
// hook crashes, security — is the Makefile's E2E_SMOKE, a go test -run
// pattern: `make test-smoke` runs it for every change. `make test-full`
// (which is `make test`, what CI runs) runs every test. No test skips
// itself for a tier; TestSmokeTierNamesTests keeps E2E_SMOKE's names true.
//
// The tests mostly wait on sleeping jobs, so they run in parallel, four at
// a time unless go test is given -parallel (its default, GOMAXPROCS, is 2
// on a 2-core machine); testcluster.sh keeps the own clusters' ports,
// directories and slurmstepds apart. The tests that measure wall-clock
// time (TestJobCompDeadlineWithLockedDB, TestPrometheusScrape) are
// sequential: go test runs them first, with no other test of this package
// beside them.
package e2e
