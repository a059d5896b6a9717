"""What a shared store and sharding cost and buy, measured in one run.

Prints, each figure the median of --repeat runs, each in a fresh process:
  (a) 10,000 cases × 3 trials against an agent that returns at once, concurrency 50, into a
      SQLite store and into a PostgreSQL store: case-trials per second and their ratio
      (target: PostgreSQL at least 0.7× SQLite's throughput);
  (b) the same suite with an agent sleeping 20 ms: two shards at once (`--shard 1/2` and
      `2/2`, each at concurrency C) into one PostgreSQL run, against one process at
      concurrency C: the wall time of each, processes started to all stored, and their
      ratio (target ≤ 0.6), then the same for the run phase alone (loading left out);
  (c) peak RSS of each process (driver target ≤ 300 MB);
  (d) the same 20 ms suite through `--executor ray` on a local cluster of 2 workers at a
      total concurrency C, into SQLite: the run phase against the ideal N·k·L / C (target
      ≤ 1.3×), against the local executor at concurrency C, and against Ray alone (two
      actors that only sleep, with caseforge's protocol), both measured alongside; the
      cluster's start-up apart; peak RSS of the driver and of each worker.
The PostgreSQL server is a throw-away cluster on loopback (tests/postgres.py), or the one
--postgres names (an empty database: the benchmark creates its own databases in it).

Usage: python benchmarks/scale.py [--cases N] [--trials K] [--repeat R] [--postgres URL]
                                  [--only ray]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(HERE), str(REPO)]

import runner_overhead  # noqa: E402  (its suite and its in-process run)

SHARD = """
import asyncio, json, sys, time, resource
from pathlib import Path
from caseforge.run.plan import Shard
from caseforge.run.runner import Runner, RunOptions
from caseforge.store.db import RunStore
suite, agent, trials, concurrency, url, shard, run_id = sys.argv[1:8]
index, count = map(int, shard.split("/"))
store = RunStore(url)
options = RunOptions(suite_dir=Path(suite), agent=agent, trials=int(trials),
                     concurrency=int(concurrency), shard=Shard(index, count), run_id=run_id)
marks = {}
def started(handles, progress):
    marks["run"] = time.time()
outcome = asyncio.run(Runner(options, store, on_start=started).run())
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"rss_mb": rss, "status": outcome.status, "done": outcome.executed,
                  "run_start": marks["run"], "run_end": time.time()}))
"""


EXECUTOR = """
import asyncio, json, sys, time, resource
from pathlib import Path
from caseforge.run.runner import Runner, RunOptions
from caseforge.store.db import RunStore
suite, agent, trials, concurrency, url, executor = sys.argv[1:7]
store = RunStore(url)
marks = {}
def started(handles, progress):
    marks["run"] = time.perf_counter()
start = time.perf_counter()
options = RunOptions(suite_dir=Path(suite), agent=agent, trials=int(trials),
                     concurrency=int(concurrency), executor=executor,
                     workers=2 if executor == "ray" else None)
outcome = asyncio.run(Runner(options, store, on_start=started).run())
end = time.perf_counter()
pool = outcome.pool or {}
print(json.dumps({"run": end - marks["run"], "startup": marks["run"] - start,
                  "stored": store.count(outcome.runs[0].run_id),
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "worker_rss_mb": pool.get("worker_peak_rss_mb", 0),
                  "lost": pool.get("lost_workers", 0)}))
"""


BARE_RAY = """
import asyncio, json, os, sys, time
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
import ray
total, concurrency, workers = map(int, sys.argv[1:4])
ray.init(include_dashboard=False, configure_logging=False, log_to_driver=False,
         logging_level="WARNING")

@ray.remote(num_cpus=1, max_concurrency=1000)
class Sleeper:
    # The same protocol as caseforge's workers (batches in, one stream of what finished
    # out, the same windows and prefetch), with nothing but the 20 ms sleep in between.
    def __init__(self, slots):
        self.slots = asyncio.Semaphore(slots)
        self.done, self.finished = [], asyncio.Event()
    async def one(self, n):
        async with self.slots:
            await asyncio.sleep(0.02)
        self.done.append(n)
        self.finished.set()
    async def submit(self, batch):
        for n in batch:
            asyncio.ensure_future(self.one(n))
    async def results(self):
        while True:
            await self.finished.wait()
            await asyncio.sleep(0.01)
            self.finished.clear()
            done, self.done = self.done, []
            if done:
                yield done
    def ready(self):
        return True

actors = [Sleeper.remote(-(-concurrency // workers)) for _ in range(workers)]
ray.get([a.ready.remote() for a in actors])

async def main():
    width = concurrency * 4
    left, sent, got = total, 0, 0
    waiting = [0] * workers
    more = asyncio.Event()
    async def read(i, a):
        nonlocal got
        async for ref in a.results.remote():
            batch = await ref
            got += len(batch)
            waiting[i] -= len(batch)
            more.set()
    start = time.perf_counter()
    readers = [asyncio.ensure_future(read(i, a)) for i, a in enumerate(actors)]
    while got < total:
        free = width - (sent - got)
        if free and sent < total:
            count = min(free, total - sent)
            for i, a in enumerate(actors):
                share = count // workers + (i < count % workers)
                if share:
                    a.submit.remote(list(range(sent, sent + share)))
                    waiting[i] += share
                    sent += share
        more.clear()
        try:
            await asyncio.wait_for(more.wait(), 0.02)  # the driver's send window
        except asyncio.TimeoutError:
            pass
    run = time.perf_counter() - start
    for r in readers:
        r.cancel()
    print(json.dumps({"run": run}))

asyncio.run(main())
"""


def _database(admin_url: str) -> str:
    """A new empty database beside the one ``admin_url`` names."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(admin_url)
    name = f"bench_{secrets.token_hex(4)}"
    with psycopg.connect(
        host=url.host, port=url.port, user=url.username, password=url.password,
        dbname=url.database, autocommit=True,
    ) as conn:  # fmt: skip
        conn.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type]
    return url.set(drivername="postgresql+psycopg", database=name).render_as_string(
        hide_password=False
    )


def throughput(suite: Path, url: str, trials: int) -> dict[str, float]:
    """One in-process run into the store at ``url``: the run's rate and peak RSS."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(suite), str(REPO / "src")])}
    argv = (str(suite), "bench_overhead_agent:instant", str(trials), "50", url)
    with tempfile.TemporaryDirectory() as tmp:
        found = runner_overhead._child(runner_overhead.CHILD, *argv, cwd=tmp, env=env)
    found["rate"] = found["stored"] / found["run"]
    return found


def sharded(suite: Path, url: str, trials: int, concurrency: int, shards: int) -> dict[str, float]:
    """``shards`` processes at once into one run; wall time from start to all stored."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(suite), str(REPO / "src")])}
    run_id = f"bench-{secrets.token_hex(3)}"
    start = time.perf_counter()
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                SHARD,
                str(suite),
                "bench_overhead_agent:sleepy",
                str(trials),
                str(concurrency),
                url,
                f"{i}/{shards}",
                run_id,
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(1, shards + 1)
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(err)
        results.append(json.loads(out.strip().splitlines()[-1]))
    wall = time.perf_counter() - start
    from caseforge.store.db import RunStore

    store = RunStore(url)
    stored, status = store.count(run_id), store.get_run(run_id).status
    store.close()
    if status != "finished":
        raise SystemExit(f"the sharded run is {status}, not finished")
    # The run phase: from the first shard's plan made to the last shard's results stored.
    run = max(r["run_end"] for r in results) - min(r["run_start"] for r in results)
    return {"wall": wall, "run": run, "stored": stored, "rss_mb": max(r["rss_mb"] for r in results)}


def executor_run(suite: Path, trials: int, concurrency: int, executor: str) -> dict[str, float]:
    """One run of the 20 ms agent through ``executor`` (local, or ray: a local cluster)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(suite), str(REPO / "src")])}
    env.pop("RAY_ADDRESS", None)
    argv = (str(suite), "bench_overhead_agent:sleepy", str(trials), str(concurrency))
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/store.db"
        return runner_overhead._child(EXECUTOR, *argv, url, executor, cwd=tmp, env=env)


def bare_ray(total: int, concurrency: int) -> dict[str, float]:
    """The same sleeps through Ray alone: 2 actors, caseforge's protocol, nothing else."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    with tempfile.TemporaryDirectory() as tmp:
        return runner_overhead._child(BARE_RAY, str(total), str(concurrency), "2", cwd=tmp, env=env)


def ray_row(suite: Path, n: int, k: int, r: int, c: int) -> None:
    local, ray, bare = [], [], []
    for _ in range(r):  # alternating, so a slow spell of the machine hits each
        local.append(executor_run(suite, k, c, "local"))
        ray.append(executor_run(suite, k, c, "ray"))
        bare.append(bare_ray(n * k, c))
    ideal = n * k * 0.02 / c
    run_ray = statistics.median(x["run"] for x in ray)
    run_local = statistics.median(x["run"] for x in local)
    stored = {int(x["stored"]) for x in ray}
    run_bare = statistics.median(x["run"] for x in bare)
    print(
        f"(d) the 20 ms suite through --executor ray, a local cluster of 2 workers, total "
        f"concurrency {c}, median of {r}: run phase {run_ray:.2f} s against the ideal "
        f"{ideal:.2f} s → {run_ray / ideal:.3f}× (target ≤ 1.3); the local executor at "
        f"concurrency {c} {run_local:.2f} s ({run_local / ideal:.3f}×) → Ray / local "
        f"{run_ray / run_local:.2f}; Ray alone (2 actors sleeping 20 ms, the same "
        f"protocol, no caseforge) {run_bare:.2f} s ({run_bare / ideal:.3f}×), so caseforge "
        f"adds {run_ray / run_bare:.3f}× to Ray's own floor; start-up (cluster, workers, loading) "
        f"{statistics.median(x['startup'] for x in ray):.1f} s vs "
        f"{statistics.median(x['startup'] for x in local):.1f} s; {sorted(stored)} stored; "
        f"peak RSS driver {max(x['rss_mb'] for x in ray):.0f} MB (target ≤ 300 MB), each "
        f"worker {max(x['worker_rss_mb'] for x in ray):.0f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--postgres", help="an admin URL of a server to use instead")
    parser.add_argument("--only", choices=["ray"], help="print only this row")
    args = parser.parse_args()
    n, k, r, c = args.cases, args.trials, args.repeat, args.concurrency
    if args.only == "ray":
        with tempfile.TemporaryDirectory() as tmp:
            suite = Path(tmp) / "suite"
            runner_overhead.make_suite(suite, n)
            ray_row(suite, n, k, r, c)
        return
    cluster = None
    admin = args.postgres
    if admin is None:
        from tests.postgres import start_cluster

        cluster = start_cluster()
        admin = next(cluster).url()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            suite = Path(tmp) / "suite"
            runner_overhead.make_suite(suite, n)
            lite, pg = [], []
            for i in range(r):  # alternating, so a slow spell of the machine hits both
                lite.append(throughput(suite, f"sqlite:///{tmp}/lite-{i}.db", k))
                pg.append(throughput(suite, _database(admin), k))
            rate_lite = statistics.median(x["rate"] for x in lite)
            rate_pg = statistics.median(x["rate"] for x in pg)
            print(
                f"(a) {n} cases × {k} trials, agent returns at once, concurrency 50, median of "
                f"{r}: SQLite {rate_lite:,.0f} case-trials/s, PostgreSQL {rate_pg:,.0f}/s → "
                f"ratio {rate_pg / rate_lite:.2f} (target ≥ 0.7); peak RSS SQLite "
                f"{statistics.median(x['rss_mb'] for x in lite):.0f} MB, PostgreSQL "
                f"{statistics.median(x['rss_mb'] for x in pg):.0f} MB (target ≤ 300 MB)"
            )
            one, two = [], []
            for _ in range(r):
                one.append(sharded(suite, _database(admin), k, c, 1))
                two.append(sharded(suite, _database(admin), k, c, 2))
            run_one = statistics.median(x["run"] for x in one)
            run_two = statistics.median(x["run"] for x in two)
            wall_one = statistics.median(x["wall"] for x in one)
            wall_two = statistics.median(x["wall"] for x in two)
            ideal = n * k * 0.02 / c
            print(
                f"(b) the same with a 20 ms agent into PostgreSQL, median of {r}: one process "
                f"at concurrency {c} {wall_one:.2f} s (ideal {ideal:.2f} s); two shards at "
                f"once, {c} each, {wall_two:.2f} s (ideal {ideal / 2:.2f} s) → ratio "
                f"{wall_two / wall_one:.2f} (target ≤ 0.6); {int(two[0]['stored'])} stored "
                "in one run, each once; the run phase alone (plan made to all stored, "
                f"loading left out) {run_two:.2f} s vs {run_one:.2f} s → ratio "
                f"{run_two / run_one:.2f}"
            )
            print(
                f"(c) peak RSS of a shard process {max(x['rss_mb'] for x in two):.0f} MB, of "
                f"the single process {max(x['rss_mb'] for x in one):.0f} MB (target ≤ 300 MB)"
            )
            ray_row(suite, n, k, r, c)
    finally:
        if cluster is not None:
            for _ in cluster:
                pass


if __name__ == "__main__":
    main()
